"""The public surface: every public module lists its names in ``__all__``, every listed
name exists, and names that load lazily are visible to type checkers."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def public_modules() -> list[tuple[str, Path]]:
    """Modules with no underscore-prefixed part (the sandbox harness runs inside the sandbox)."""
    found = []
    for path in sorted((SRC / "assay").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not any(p.startswith("_") for p in parts) and "harness" not in parts:
            found.append((".".join(parts), path))
    return found


MODULES = public_modules()


@pytest.mark.parametrize("name, path", MODULES, ids=[name for name, _ in MODULES])
def test_every_public_module_declares_names_that_exist(name: str, path: Path) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert isinstance(exported, list), f"{path} has no __all__ list"
    assert len(exported) == len(set(exported)), f"{path}: __all__ lists a name twice"
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{path}: __all__ names {missing}, which the module does not have"


def _bound_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Names bound at run time, and names imported only under ``if TYPE_CHECKING:``."""
    runtime: set[str] = set()
    typing_only: set[str] = set()

    def bind(node: ast.stmt, into: set[str]) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            into.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            into.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            into.update(t.id for t in targets if isinstance(t, ast.Name))

    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                bind(inner, typing_only)
        elif isinstance(node, ast.Try):
            for inner in node.body:
                bind(inner, runtime)
        else:
            bind(node, runtime)
    return runtime, typing_only


LAZY = [(name, path) for name, path in MODULES if "def __getattr__" in path.read_text(encoding="utf-8")]


def test_the_lazy_modules_are_the_expected_ones() -> None:
    assert {"assay", "assay.evaluation", "assay.evaluators", "assay.scorers"} <= {name for name, _ in LAZY}
    assert "assay.errors" not in {name for name, _ in LAZY}, "errors load eagerly: catching one loads nothing"


@pytest.mark.parametrize("name, path", LAZY, ids=[name for name, _ in LAZY])
def test_lazily_loaded_names_are_imported_for_type_checkers(name: str, path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    runtime, typing_only = _bound_names(tree)
    module = importlib.import_module(name)
    unseen = [n for n in module.__all__ if n not in runtime and n not in typing_only]
    assert not unseen, f"{path}: {unseen} load lazily but are not imported under TYPE_CHECKING"


@pytest.mark.slow
def test_a_type_checker_sees_real_types_through_the_lazy_packages(tmp_path: Path) -> None:
    """Wrong arguments to lazily exported classes are type errors, not ``Any``."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        textwrap.dedent("""
        from assay import evaluate_comparative
        from assay.errors import SandboxError
        from assay.evaluators import ExactMatchEvaluator
        from assay.scorers import create_tone_scorer

        ExactMatchEvaluator(ignore_case="yes")
        create_tone_scorer(7, 8, 9)
        evaluate_comparative(42)
        x: int = SandboxError
        reveal_type(ExactMatchEvaluator)
    """),
        encoding="utf-8",
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--follow-imports=silent",
            "--ignore-missing-imports",
            str(probe),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    lines = result.stdout.splitlines()
    errors = {int(line.split(":")[1]) for line in lines if ": error:" in line}
    assert errors == {7, 8, 9, 10}, result.stdout
    assert any("ExactMatchEvaluator" in line and "note: Revealed type" in line for line in lines)
