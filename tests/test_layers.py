"""The import contract: packages import only their own layer and the layers below it.

    foundation  assay._aio, _budget, _ids, _output_text, _traceback, errors
    schemas     assay.schemas
    store       assay.store
    services    assay.llm, assay.embeddings, assay.sandbox     (llm and sandbox never meet)
    records     assay.tracing, assay.comparison, assay.agreement, assay.report
                (what evaluation writes and shows, and what reads it back)
    evaluation  assay.evaluation                               (the executor interface included)
    executors   assay.executors                                (Ray builds on evaluation)
    evaluators  assay.evaluators
    scorers     assay.scorers                                  (build on evaluators, never back)
    apps        assay (the package), client, cli, ui, demo, testing

Every runtime import counts, at module level or inside a function; imports under
``if TYPE_CHECKING:`` do not (they exist for annotations only). Names resolved by string
(``importlib.import_module`` in the lazy ``__getattr__`` of a package) are not imports.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "foundation",
        (
            "assay._aio",
            "assay._budget",
            "assay._ids",
            "assay._output_text",
            "assay._traceback",
            "assay.errors",
            "assay._metric",
            "assay._suggest",
            "assay.stats",
        ),
    ),
    ("schemas", ("assay.schemas",)),
    ("store", ("assay.store",)),
    ("services", ("assay.llm", "assay.embeddings", "assay.sandbox")),
    (
        "records",
        (
            "assay.tracing",
            "assay.comparison",
            "assay.agreement",
            "assay.report",
            "assay.human",
            "assay.row_export",
        ),
    ),
    ("evaluation", ("assay.evaluation",)),
    ("executors", ("assay.executors",)),
    ("evaluators", ("assay.evaluators",)),
    ("scorers", ("assay.scorers",)),
    (
        "apps",
        ("assay.client", "assay.cli", "assay.ui", "assay.service", "assay.demo", "assay.testing", "assay"),
    ),
]
#: services that share a layer but must not import each other
INDEPENDENT = [("assay.llm", "assay.sandbox"), ("assay.embeddings", "assay.sandbox")]


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.importer} imports {self.imported}"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def runtime_imports(path: Path, root: Path = SRC, typing_too: bool = False) -> list[Import]:
    """The ``assay`` imports of one file that run (TYPE_CHECKING blocks skipped, unless
    ``typing_too``: a static reader such as mypy follows those as well)."""
    name = module_name(path, root)
    shown = str(path.relative_to(root.parent))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for stmt in [*child.body, *child.orelse] if typing_too else child.orelse:
                    visit_one(stmt)
                continue
            visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.extend(Import(name, alias.name, shown, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:  # ``from pkg import submodule`` imports the submodule
                submodule = f"{base}.{alias.name}"
                target = submodule if _is_module(root, submodule) else base
                found.append(Import(name, target, shown, node.lineno))
        visit(node)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return [i for i in found if i.imported == "assay" or i.imported.startswith("assay.")]


def _is_module(root: Path, dotted: str) -> bool:
    path = root.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def layer_of(module: str) -> int:
    best = (-1, -1)
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                best = max(best, (len(prefix), index))
    assert best[1] >= 0, f"{module} is in no layer: add it to LAYERS in {__file__}"
    return best[1]


def all_imports(typing_too: bool = False) -> list[Import]:
    return [
        i for path in sorted((SRC / "assay").rglob("*.py")) for i in runtime_imports(path, SRC, typing_too)
    ]


def layer_violations(imports: list[Import]) -> list[str]:
    problems = []
    for imp in imports:
        below, above = layer_of(imp.imported), layer_of(imp.importer)
        if below > above:
            problems.append(f"{imp}  ({LAYERS[above][0]} may not import {LAYERS[below][0]})")
        for a, b in INDEPENDENT:
            for x, y in ((a, b), (b, a)):
                if _within(imp.importer, x) and _within(imp.imported, y):
                    problems.append(f"{imp}  ({x} and {y} are independent)")
    return problems


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_every_import_points_down_the_layers() -> None:
    problems = layer_violations(all_imports())
    assert not problems, "imports against the layers:\n" + "\n".join(problems)


def test_the_check_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    """The checker itself: an upward import hidden in a function, or relative, is caught."""
    fake = tmp_path / "src" / "assay" / "store" / "probe.py"
    fake.parent.mkdir(parents=True)
    fake.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from assay.client import Client\n"
        "def f():\n    from ..evaluation import evaluate\n    import assay.ui\n",
        encoding="utf-8",
    )
    problems = layer_violations(runtime_imports(fake, tmp_path / "src"))
    assert len(problems) == 2, problems  # the TYPE_CHECKING import is not one of them
    assert "imports assay.evaluation" in problems[0] and ":5:" in problems[0]
    assert "imports assay.ui" in problems[1]


def test_no_module_imports_itself_in_a_circle() -> None:
    graph: dict[str, set[str]] = {}
    for imp in all_imports():
        if imp.importer != imp.imported:
            graph.setdefault(imp.importer, set()).add(imp.imported)
    # The harness runs inside the sandbox, as its own program; its modules are the
    # sandbox's business.
    cycles = [c for c in _cycles(graph) if not all(m.startswith("assay.sandbox.harness") for m in c)]
    assert not cycles, f"import cycles: {cycles}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in list(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys\n{statement}\nprint('\\n'.join(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(result.stdout.split())


HEAVY = (
    "assay.llm",
    "assay.evaluators",
    "assay.scorers",
    "assay.sandbox",
    "assay.ui",
    "assay.embeddings",
    "httpx",
    "h11",
    "sqlglot",
    "fastapi",
    "numpy",
    "pandas",
)


def test_import_assay_loads_no_heavy_part() -> None:
    loaded = _loaded_after("import assay")
    heavy = sorted(m for m in loaded if any(_within(m, h) for h in HEAVY))
    assert not heavy, f"import assay loaded {heavy}"
    assert {"assay.store", "assay.client", "assay.tracing"} <= loaded


def test_the_runner_loads_when_evaluate_is_first_named() -> None:
    """``evaluate`` is lazy: a program that only traces or reads the store never loads the
    runner, and one that names ``evaluate`` gets the real function (no stand-in)."""
    runner = {"assay.evaluation._api", "assay.evaluation._runner", "assay.evaluation._results"}
    assert not runner & _loaded_after("import assay\nassay.Client('sqlite://').list_datasets()")
    assert runner <= _loaded_after("import assay\nassay.evaluate")
    assert runner <= _loaded_after("from assay import evaluate")


@pytest.mark.parametrize(
    "statement, family",
    [
        ("import assay.evaluators", "assay.evaluators."),
        ("import assay.scorers", "assay.scorers."),
        ("import assay.errors", "assay.sandbox"),
    ],
)
def test_package_imports_load_no_family(statement: str, family: str) -> None:
    loaded = _loaded_after(statement)
    allowed = {"assay.scorers._base"}
    assert not sorted(m for m in loaded if m.startswith(family) and m not in allowed)


def test_lazy_names_load_on_use() -> None:
    loaded = _loaded_after("import assay\nassay.evaluate_comparative")
    assert "assay.evaluation._pairwise_run" in loaded and "assay.llm" in loaded


def package_of(module: str) -> str:
    """``assay.store.sqlite._rows`` -> ``assay.store``; a top-level module is its own."""
    return ".".join(module.split(".")[:2])


def test_no_import_cycle_spans_packages_even_for_type_checkers() -> None:
    """Packages form a graph without circles, TYPE_CHECKING imports included: a static
    reader (and mypy's incremental cache) sees each package above the ones it uses."""
    graph: dict[str, set[str]] = {}
    for imp in all_imports(typing_too=True):
        a, b = package_of(imp.importer), package_of(imp.imported)
        if a != b and b != "assay":  # the root package's lazy names are resolved by string
            graph.setdefault(a, set()).add(b)
    assert not _cycles(graph), f"packages importing each other: {_cycles(graph)}"


def private_part(module: str) -> bool:
    """A module below a package whose path has a ``_private`` part (``assay.store._json``).
    Top-level ``assay._aio``-style modules are the shared foundation, not a package's own."""
    return any(part.startswith("_") for part in module.split(".")[2:])


#: another package's private modules that may be imported, and by which packages: each is
#: a module that is one package's implementation and another's too (shrink it, never grow it)
PRIVATE_ALLOWED: dict[str, set[str]] = {
    # one statistics code for the run's report, the UI and compare
    "assay.evaluation._stats": {"assay.ui"},
    # the read model: the UI and compare read the store's stored columns (issue 36 leaves
    # moving these queries into the store for after the UI work in flight)
    "assay.store._columns": {"assay.comparison"},
    "assay.comparison._compare": {"assay.ui"},
    # the completeness and heuristic scorers share the text evaluators' element analysis
    "assay.evaluators.text._analysis": {"assay.scorers"},
}


def _allowed_by(module: str) -> str | None:
    return next((k for k in PRIVATE_ALLOWED if module == k or module.startswith(k + ".")), None)


def test_no_package_reaches_into_another_packages_private_modules() -> None:
    strays, used = [], set()
    for imp in all_imports(typing_too=True):
        a, b = package_of(imp.importer), package_of(imp.imported)
        if a == b or not private_part(imp.imported):
            continue
        key = _allowed_by(imp.imported)
        if key is not None and a in PRIVATE_ALLOWED[key]:
            used.add(key)
        else:
            strays.append(str(imp))
    assert not strays, "imports of another package's private modules:\n" + "\n".join(strays)
    assert not set(PRIVATE_ALLOWED) - used, f"allowed but unused (remove): {set(PRIVATE_ALLOWED) - used}"


def test_the_sandbox_imports_nothing_of_assay_but_its_errors() -> None:
    """So it could become its own distribution."""
    outside = [
        str(imp)
        for imp in all_imports(typing_too=True)
        if _within(imp.importer, "assay.sandbox")
        and not (_within(imp.imported, "assay.sandbox") or imp.imported == "assay.errors")
    ]
    assert not outside, outside


def test_evaluation_names_no_client() -> None:
    """``client=`` is anything with a store: evaluation does not know the class above it."""
    named = [
        str(imp)
        for imp in all_imports(typing_too=True)
        if _within(imp.importer, "assay.evaluation") and _within(imp.imported, "assay.client")
    ]
    assert not named, named


#: what ``import assay`` may load of assay: 56 after issue 36's first step (from 66), 58 with
#: the client's example edits and traced streams (issue 43), 23 once evaluation's names load
#: on first use (issue 36's second step; its aim was 40): lower it, never raise it
IMPORT_ASSAY_BUDGET = 23
NEVER_ON_IMPORT = (
    "assay.evaluators",  # the judges, SQL, code and business evaluators
    "assay.scorers",
    "assay.llm",
    "assay.sandbox",
    "assay.ui",
    "assay.service",
    "assay.executors",  # Ray
    "assay.store.postgres",
    "assay.comparison",
    "ray",
    "sqlglot",
    "fastapi",
    "psycopg",
)


def test_import_assay_loads_a_bounded_core() -> None:
    loaded = _loaded_after("import assay")
    ours = sorted(m for m in loaded if _within(m, "assay"))
    assert len(ours) <= IMPORT_ASSAY_BUDGET, f"import assay loaded {len(ours)} assay modules: {ours}"
    heavy = sorted(m for m in loaded if any(_within(m, h) for h in NEVER_ON_IMPORT))
    assert not heavy, f"import assay loaded {heavy}"
