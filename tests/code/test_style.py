"""CodeStyleEvaluator (ruff format, gofmt, prettier) and go vet, each a real tool run as a
subprocess with limits."""

from __future__ import annotations

import shutil

import pytest

from assay.evaluation import EvaluationResult, EvaluationResults
from assay.evaluators.code import CodeStyleEvaluator
from assay.evaluators.code._tools import ToolMissing, run_tool
from assay.evaluators.code.go_vet import GoVetEvaluator
from assay.evaluators.code.quality import quality_evaluators
from assay.schemas import Example, Run


def style(code: str, language: str) -> list[EvaluationResult]:
    output = CodeStyleEvaluator(language=language).evaluate(Run(outputs={"text": code}), None)
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
    [("python", "def f(:\n"), ("go", "package main\nfunc {"), ("javascript", "function (")],
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


def test_a_language_without_a_packaged_formatter_is_an_error_naming_why() -> None:
    (java,) = style("class A {}", "java")
    assert java.score is None and java.error is not None and "google-java-format" in java.error
    if shutil.which("clang-format") is None:
        (cpp,) = style("int f(){return 1;}", "cpp")
        assert cpp.error is not None and "apt-get install clang-format" in cpp.error


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
    "language, reason", [("typescript", "npm-only"), ("cpp", "cppcheck"), ("cobol", "knows no")]
)
def test_quality_evaluators_say_when_a_language_has_no_tool(language: str, reason: str) -> None:
    with pytest.raises(ToolMissing, match=reason):
        quality_evaluators(language)


def test_quality_evaluators_of_python_and_go() -> None:
    assert [type(e).__name__ for e in quality_evaluators("python")] == [
        "RuffLintEvaluator",
        "BanditSecurityEvaluator",
    ]
    assert [type(e).__name__ for e in quality_evaluators("golang")] == ["GoVetEvaluator"]
