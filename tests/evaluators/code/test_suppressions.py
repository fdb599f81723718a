"""In-code suppressions are the candidate's text, not the evaluator's settings: a comment
cannot lift a lint, security, style or cppcheck score, unless the evaluator is told to
honour it (and the result says which). Code a tool cannot parse is a 0 with the tool's
message, never an excluded error. Real tools throughout."""

from __future__ import annotations

from typing import Any

import pytest

from assay.evaluation import BaseEvaluator, EvaluationResult, EvaluationResults
from assay.evaluators import BanditSecurityEvaluator, CppcheckEvaluator, RuffLintEvaluator
from assay.evaluators.code import CodeStyleEvaluator
from assay.evaluators.code._suppressions import defuse_format_switches
from assay.schemas import Example, Run


def first(evaluator: BaseEvaluator, code: str) -> EvaluationResult:
    output = evaluator.evaluate(Run(outputs={"text": code}), Example())
    result = output.results[0] if isinstance(output, EvaluationResults) else output
    assert isinstance(result, EvaluationResult)
    assert result.error is None, result.error
    return result


# -- ruff ------------------------------------------------------------------------------------
NOQA = "# ruff: noqa\nimport os\nimport sys  # noqa\nimport json  # noqa: F401\n\n\ndef f():\n    return 1\n"


def test_ruff_counts_findings_the_code_marks_noqa() -> None:
    ignored = first(RuffLintEvaluator(select=["F"]), NOQA)
    assert ignored.metadata["count"] == 3, ignored.metadata["findings"]
    assert ignored.score == pytest.approx(1 - 3 / 6)
    assert ignored.metadata["suppressions"] == "ignored"
    honoured = first(RuffLintEvaluator(select=["F"], honour_suppressions=True), NOQA)
    assert honoured.score == 1.0 and honoured.metadata["suppressions"] == "honoured"


# -- bandit ----------------------------------------------------------------------------------
NOSEC = (
    "import subprocess  # nosec\n\n\n"
    "def run(command):  # nosec\n"
    "    subprocess.call(command, shell=True)  # nosec\n"
    "    return eval(command)  # nosec B307\n"
)


def test_bandit_counts_findings_the_code_marks_nosec() -> None:
    ignored = first(BanditSecurityEvaluator(), NOSEC)
    assert ignored.score == 0.0
    assert {"B602", "B307"} <= {f["test_id"] for f in ignored.metadata["findings"]}
    assert ignored.metadata["suppressions"] == "ignored"
    honoured = first(BanditSecurityEvaluator(honour_suppressions=True), NOSEC)
    assert honoured.score == 1.0 and honoured.metadata["suppressions"] == "honoured"


PYTHON_2 = 'import os\nprint "hello"\nos.system(raw_input())\n'


@pytest.mark.parametrize(
    "evaluator", [BanditSecurityEvaluator(), RuffLintEvaluator()], ids=["bandit", "ruff"]
)
def test_python_2_code_is_a_zero_with_the_tools_message(evaluator: BaseEvaluator) -> None:
    result = first(evaluator, PYTHON_2)
    assert result.score == 0.0
    assert "could not parse" in (result.feedback or "")
    assert result.comment and result.metadata["tool_error"] == result.comment


# -- formatters ------------------------------------------------------------------------------
FORMATTER_OFF = [
    ("python", "# fmt: off\ndef f( x ):\n  return x+1\n# fmt: on\n", 2),
    ("python", "def f( x ):  # fmt: skip\n    return x\n", 1),
    ("python", "# yapf: disable\nx=[1,\n  2]\n", 1),
    ("cpp", "// clang-format off\nint f(int x){\nreturn x+1;}\n// clang-format on\n", 2),
    ("cpp", "/* clang-format off */\nint f(int x){\nreturn x+1;}\n", 1),
    ("javascript", "// prettier-ignore\nfunction f(x){return x+1}\n", 1),
    ("typescript", "// prettier-ignore\nfunction f(x:number):number{return x+1}\n", 1),
]


@pytest.mark.parametrize("language, code, switches", FORMATTER_OFF, ids=[c[1][:18] for c in FORMATTER_OFF])
def test_a_formatter_off_switch_does_not_make_messy_code_formatted(
    language: str, code: str, switches: int
) -> None:
    ignored = first(CodeStyleEvaluator(language=language), code)
    assert ignored.score == 0.0, ignored.metadata["diff"]
    assert ignored.metadata["suppressions"] == "ignored"
    assert ignored.metadata["defused_switches"] == switches
    honoured = first(CodeStyleEvaluator(language=language, honour_suppressions=True), code)
    assert honoured.score == 1.0, honoured.metadata["diff"]
    assert honoured.metadata["suppressions"] == "honoured"


def test_formatted_code_with_a_switch_still_scores_one() -> None:
    code = "# fmt: off\ndef f(x):\n    return x + 1\n\n\n# fmt: on\n"
    assert first(CodeStyleEvaluator(language="python"), code).score == 1.0


def test_defusing_keeps_every_line_and_is_linear() -> None:
    code = "x = 1  # fmt: off\n" * 3 + "s = 'clang-format off'\n"
    defused, count = defuse_format_switches("python", code)
    assert count == 3 and [len(line) for line in defused.splitlines()] == [
        len(line) for line in code.splitlines()
    ]
    assert defuse_format_switches("go", code) == (code, 0)
    # a long run of blanks after many names: one pass, not a scan per name
    hostile = "fmt" + " " * 200_000 + "fmt" * 100_000
    assert defuse_format_switches("python", hostile) == (hostile, 0)


# -- cppcheck --------------------------------------------------------------------------------
GNUC_BUG = """int first() {
#ifdef __GNUC__
    int a[3];
    a[3] = 1;
    return a[0];
#else
    return 0;
#endif
}
"""
UNSEEN = """#ifdef _MSC_VER
int never() { int b[2]; b[5] = 1; return b[0]; }
#endif
int add(int x, int y) { return x + y; }
"""


def test_cppcheck_analyses_what_gcc_compiles() -> None:
    rules = {f["rule"] for f in first(CppcheckEvaluator(), GNUC_BUG).metadata["findings"]}
    assert "arrayIndexOutOfBounds" in rules
    version_bug = GNUC_BUG.replace("#ifdef __GNUC__", "#if __cplusplus >= 201703L && defined(__linux__)")
    rules = {f["rule"] for f in first(CppcheckEvaluator(), version_bug).metadata["findings"]}
    assert "arrayIndexOutOfBounds" in rules
    unseen = first(CppcheckEvaluator(), UNSEEN)  # no compiler here builds it: not the code's
    assert unseen.score == 1.0, unseen.metadata["findings"]


def test_cppcheck_honours_inline_suppressions_only_when_told() -> None:
    code = "int f() {\n    int a[3];\n    // cppcheck-suppress arrayIndexOutOfBounds\n    a[3] = 1;\n    return a[0];\n}\n"

    def rules(**options: Any) -> set[str]:
        result = first(CppcheckEvaluator(**options), code)
        assert result.metadata["suppressions"] == ("honoured" if options else "ignored")
        return {f["rule"] for f in result.metadata["findings"]}

    assert "arrayIndexOutOfBounds" in rules()
    assert "arrayIndexOutOfBounds" not in rules(honour_suppressions=True)


def test_cppcheck_sees_the_macros_of_the_flags_the_sandbox_compiles_with() -> None:
    from assay.evaluators.code.cppcheck import COMPILER_FLAGS, compiler_macros
    from assay.sandbox._toolchains import CPP_FLAGS

    assert set(COMPILER_FLAGS) == {flag for flag in CPP_FLAGS if flag.startswith(("-std", "-O"))}
    macros = compiler_macros()
    assert macros["__cplusplus"] == "201703L" and macros["__OPTIMIZE__"] == "1"
