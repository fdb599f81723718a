"""A small repository instance (``calc``) written per test session, and helpers to make
patches against it and judge them on a chosen sandbox backend."""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay.evaluators import RepositoryPatchEvaluator
from assay.sandbox import SandboxConfig, SandboxIsolationWarning
from assay.schemas import EvaluationResult, Example, Run

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED = CALC.replace("a - b", "a + b")
VISIBLE = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
HIDDEN = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def new_file(path: str, text: str, mode: str = "100644") -> str:
    body = "".join("+" + line for line in text.splitlines(keepends=True))
    count = len(text.splitlines())
    return f"diff --git a/{path} b/{path}\nnew file mode {mode}\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{count} @@\n{body}"


def deleted_file(path: str, text: str) -> str:
    body = "".join("-" + line for line in text.splitlines(keepends=True))
    count = len(text.splitlines())
    return f"diff --git a/{path} b/{path}\ndeleted file mode 100644\n--- a/{path}\n+++ /dev/null\n@@ -1,{count} +0,0 @@\n{body}"


FIX = diff("calc.py", CALC, FIXED)


@pytest.fixture(scope="session")
def calc_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("calc-repo")
    (repo / "tests").mkdir()
    (repo / "calc.py").write_text(CALC)
    (repo / "tests" / "test_calc.py").write_text(VISIBLE)
    return repo


@pytest.fixture(scope="session")
def calc_example(calc_repo: Path) -> Example:
    return Example(
        inputs={"repository": str(calc_repo)},
        outputs={
            "FAIL_TO_PASS": ["tests/test_hidden.py::test_add"],
            "PASS_TO_PASS": ["tests/test_calc.py::test_mul"],
            "test_patch": new_file("tests/test_hidden.py", HIDDEN),
        },
    )


Judge = Callable[..., EvaluationResult]


@pytest.fixture(scope="session")
def judge(calc_example: Example) -> Judge:
    def run(
        patch: str, backend: str = "bubblewrap", example: Example | None = None, **options: Any
    ) -> EvaluationResult:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SandboxIsolationWarning)
            evaluator = RepositoryPatchEvaluator(sandbox=SandboxConfig(backend=backend), **options)
            result = evaluator.evaluate(Run(outputs={"output": patch}), example or calc_example)
        assert isinstance(result, EvaluationResult)
        return result

    return run
