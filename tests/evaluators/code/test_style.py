"""CodeStyleEvaluator (ruff format, gofmt, prettier, clang-format, google-java-format) and
the quality tools (go vet, cppcheck, checkstyle), each a real tool run as a subprocess
with limits: formatted against unformatted code, a finding per tool, a missing tool, and
hostile input (a huge file, a file that makes the tool spin)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from assay.evaluation import BaseEvaluator, EvaluationResult, EvaluationResults
from assay.evaluators import CheckstyleEvaluator, CppcheckEvaluator
from assay.evaluators.code import CodeStyleEvaluator, _tools
from assay.evaluators.code._tools import MAX_SOURCE_BYTES, ToolMissingError, run_tool
from assay.evaluators.code.go_vet import GoVetEvaluator
from assay.evaluators.code.quality import quality_evaluators
from assay.schemas import Example, Run


def style(code: str, language: str, **options: Any) -> list[EvaluationResult]:
    output = CodeStyleEvaluator(language=language, **options).evaluate(Run(outputs={"text": code}), None)
    if isinstance(output, EvaluationResults):
        return list(output.results)
    assert isinstance(output, EvaluationResult)
    return [output]


CASES = [
    ("python", "def f(x):\n    return x + 1\n", "def f( x ):\n  return x+1\n"),
    (
        "go",
        "package main\n\nfunc f(x int) int {\n\treturn x + 1\n}\n",
        "package main\nfunc f(x int) int {\nreturn x+1}\n",
    ),
    ("javascript", "function f(x) {\n  return x + 1;\n}\n", "function f(x){return x+1}"),
    (
        "typescript",
        "function f(x: number): number {\n  return x + 1;\n}\n",
        "function f(x:number):number{return x+1}",
    ),
    ("cpp", "int f(int x) { return x + 1; }\n", "int f(int x){\nreturn x+1;}\n"),
    (
        "java",
        "class Solution {\n  int f(int x) {\n    return x + 1;\n  }\n}\n",
        "class Solution {\n    int f(int x) { return x+1; }\n}\n",
    ),
]


@pytest.mark.parametrize("language, formatted, messy", CASES, ids=[c[0] for c in CASES])
def test_formatted_code_scores_one_and_messy_code_zero_with_the_diff(
    language: str, formatted: str, messy: str
) -> None:
    clean, clean_size = style(formatted, language)
    assert clean.score == 1 and clean_size.score == 0 and clean.metadata["diff"] == ""
    dirty, size = style(messy, language)
    assert dirty.score == 0 and dirty.metadata["language"] == language
    assert size.key == "CodeStyleEvaluator_diff_lines" and size.evaluator_info["direction"] == "lower"
    diff = dirty.metadata["diff"]
    assert diff.startswith("--- code\n+++ formatted")
    assert size.score == sum(1 for line in diff.splitlines()[2:] if line[:1] in "+-") > 0


@pytest.mark.parametrize(
    "language, broken",
    [
        ("python", "def f(:\n"),
        ("go", "package main\nfunc {"),
        ("javascript", "function ("),
        ("java", "class A { int f( {"),
    ],
)
def test_code_the_formatter_cannot_read_scores_zero_with_its_message(language: str, broken: str) -> None:
    (result,) = style(broken, language)
    assert result.score == 0 and result.error is None and result.metadata["formatter_error"]


def test_the_example_language_wins_and_fences_are_stripped() -> None:
    example = Example(inputs={"language": "go"})
    run = Run(outputs={"text": "Here:\n```go\npackage main\n\nfunc f() {}\n```"})
    output = CodeStyleEvaluator().evaluate(run, example)
    assert isinstance(output, EvaluationResults)
    assert output.results[0].score == 1 and output.results[0].metadata["formatter"] == "gofmt"


@pytest.fixture
def no_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine where no tool is installed: PATH and the package folders searched empty."""
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(_tools, "TOOL_PATH", str(tmp_path))


MISSING = [
    (CodeStyleEvaluator(language="cpp"), "int f();", "apt-get install clang-format"),
    (CodeStyleEvaluator(language="go"), "package p", "apt-get install golang-go"),
    (CodeStyleEvaluator(language="typescript"), "let x = 1", "npm install -g prettier"),
    (CodeStyleEvaluator(language="java"), "class A {}", "apt-get install default-jdk-headless"),
    (CppcheckEvaluator(), "int f();", "apt-get install cppcheck"),
    (CheckstyleEvaluator(), "class A {}", "apt-get install checkstyle"),
]


@pytest.mark.parametrize("evaluator, code, package", MISSING, ids=[f"{m[0].name}-{m[2]}" for m in MISSING])
def test_a_missing_tool_is_an_error_result_naming_the_package(
    no_tools: None, evaluator: BaseEvaluator, code: str, package: str
) -> None:
    result = evaluator.evaluate(Run(outputs={"text": code}), None)
    assert isinstance(result, EvaluationResult)  # a result, not an exception
    assert result.score is None and result.error is not None and package in result.error


def test_without_its_jars_the_java_style_check_says_where_they_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_GOOGLE_JAVA_FORMAT", str(tmp_path))
    (java,) = style("class A {}", "java")
    assert java.score is None and java.error is not None
    assert "google-java-format" in java.error and str(tmp_path) in java.error and "scripts/test" in java.error


# -- hostile input ------------------------------------------------------------------------
def nested_calls(depth: int) -> str:
    """f(f(1, 1, 1), ...) nested ``depth`` deep, 3 ** depth leaves: clang-format's line
    breaking and cppcheck's value flow both take seconds to minutes on it."""
    return "1" if depth == 0 else "f(" + ", ".join([nested_calls(depth - 1)] * 3) + ")"


HUGE = "int a;\n" * (MAX_SOURCE_BYTES // 7 + 1)
HOSTILE_EVALUATORS: list[BaseEvaluator] = [
    CodeStyleEvaluator(language="cpp"),
    CodeStyleEvaluator(language="java"),
    CodeStyleEvaluator(language="python"),
    CppcheckEvaluator(),
    CheckstyleEvaluator(),
    GoVetEvaluator(),
]


@pytest.mark.parametrize(
    "evaluator", HOSTILE_EVALUATORS, ids=lambda e: f"{e.name}-{getattr(e, 'language', '')}"
)
def test_a_huge_file_scores_zero_unread(evaluator: BaseEvaluator) -> None:
    started = time.monotonic()
    output = evaluator.evaluate(Run(outputs={"text": HUGE}), None)
    assert isinstance(output, EvaluationResult)
    assert output.score == 0 and output.error is None and "more than" in (output.comment or "")
    assert time.monotonic() - started < 5  # refused, not parsed


@pytest.mark.parametrize(
    "evaluator, code",
    [
        (CodeStyleEvaluator(language="cpp", timeout=2), f"int x = {nested_calls(9)};\n"),
        (CppcheckEvaluator(timeout=2), f"int f(int, int, int);\nint x() {{ return {nested_calls(9)}; }}\n"),
    ],
    ids=["clang-format", "cppcheck"],
)
def test_a_file_that_makes_the_tool_spin_is_stopped_and_scores_zero(
    evaluator: BaseEvaluator, code: str
) -> None:
    assert len(code) < MAX_SOURCE_BYTES  # small enough to be read: the limit is what stops it
    started = time.monotonic()
    output = evaluator.evaluate(Run(outputs={"text": code}), None)
    assert isinstance(output, EvaluationResult)
    assert output.score == 0 and output.error is None, output.comment
    assert "stopped by its limits" in (output.feedback or "")
    assert time.monotonic() - started < 15


def test_a_tool_that_hangs_is_stopped_by_its_limits() -> None:
    done = run_tool(["/bin/sh", "-c", "while :; do :; done"], "", timeout=1)
    assert done.returncode != 0  # killed by RLIMIT_CPU or the wall-clock timeout


def test_a_tool_sees_none_of_our_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TOOL_SECRET", "sk-never-shown")
    done = run_tool(["/usr/bin/env"], "")
    assert "sk-never-shown" not in done.stdout and "PATH=" in done.stdout


# -- go vet -------------------------------------------------------------------------------
def vet(code: str) -> EvaluationResult:
    result = GoVetEvaluator().evaluate(Run(outputs={"text": code}), None)
    assert isinstance(result, EvaluationResult)
    return result


@pytest.mark.slow
def test_go_vet_reports_findings_and_clean_code_scores_one() -> None:
    clean = vet("func Add(a, b int) int {\n\treturn a + b\n}\n")  # no package clause: added
    assert clean.score == 1 and clean.metadata["count"] == 0
    flawed = vet('package p\n\nimport "fmt"\n\nfunc F() {\n\tfmt.Printf("%d\\n", "x")\n}\n')
    assert flawed.score is not None and flawed.score < 1
    assert (
        flawed.metadata["findings"][0]["analyzer"] == "printf" and flawed.metadata["findings"][0]["line"] == 6
    )
    broken = vet('package p\n\nfunc F() int {\n\treturn "x"\n}\n')
    assert broken.score == 0 and "cannot use" in broken.metadata["compile_error"]


@pytest.mark.parametrize(
    "language, reason", [("typescript", "npm-only"), ("javascript", "eslint"), ("cobol", "knows no")]
)
def test_quality_evaluators_say_when_a_language_has_no_tool(language: str, reason: str) -> None:
    with pytest.raises(ToolMissingError, match=reason):
        quality_evaluators(language)


def test_quality_evaluators_of_each_language_with_a_tool() -> None:
    assert [type(e).__name__ for e in quality_evaluators("python")] == [
        "RuffLintEvaluator",
        "BanditSecurityEvaluator",
    ]
    assert [type(e).__name__ for e in quality_evaluators("golang")] == ["GoVetEvaluator"]
    assert [type(e).__name__ for e in quality_evaluators("c++")] == ["CppcheckEvaluator"]
    assert [type(e).__name__ for e in quality_evaluators("java")] == ["CheckstyleEvaluator"]


def test_cppcheck_cannot_be_made_to_read_a_file_of_the_host(tmp_path: Path) -> None:
    secret = tmp_path / "secret.h"
    secret.write_text("void leak_hunter2() { char a[2]; a[5] = 0; }\n")
    code = f'#include "{secret}"\nint f() {{ return 1; }}\n'
    result = CppcheckEvaluator().evaluate(Run(outputs={"text": code}), None)
    assert isinstance(result, EvaluationResult) and result.metadata["confined"] is True
    assert (
        result.score == 1
        and "hunter2" not in str(result.metadata)
        and str(secret) not in str(result.metadata)
    )


@pytest.mark.slow
def test_go_vet_cannot_be_made_to_read_a_package_of_the_host(tmp_path: Path) -> None:
    package = tmp_path / "hunter2"
    package.mkdir()
    (package / "s.go").write_text('package hunter2\n\nvar X = "hunter2-content" +\n')
    relative = os.path.relpath(package, "/tmp/assay-tool-x")  # from the tool's folder
    result = vet(f'package p\n\nimport "{relative}"\n\nvar _ = hunter2.X\n')
    assert "hunter2-content" not in str(result.metadata) and "unexpected EOF" not in str(result.metadata)
    assert result.score == 0  # the import is not there: the code does not type-check
