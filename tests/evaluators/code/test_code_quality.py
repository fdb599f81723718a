"""RuffLintEvaluator, BanditSecurityEvaluator, CppcheckEvaluator and CheckstyleEvaluator
on real tool runs."""

from __future__ import annotations

import pytest

from assay.evaluation import EvaluationResult
from assay.evaluators import (
    BanditSecurityEvaluator,
    CheckstyleEvaluator,
    CppcheckEvaluator,
    RuffLintEvaluator,
)
from assay.schemas import Example, Run

CLEAN = "def solution(n: int) -> int:\n    return n * n\n"
RISKY = (
    "import subprocess\n\n\ndef solution(command):\n"
    "    subprocess.call(command, shell=True)\n    return eval(command)\n"
)


def check(evaluator: object, text: object) -> EvaluationResult:
    result = evaluator.evaluate(Run(outputs={"text": text}), Example())  # type: ignore[attr-defined]
    assert isinstance(result, EvaluationResult)
    assert result.error is None, result.error
    return result


def test_ruff_clean_code_scores_one() -> None:
    result = check(RuffLintEvaluator(), f"```python\n{CLEAN}```")
    assert result.score == 1.0 and result.metadata["findings"] == []


def test_ruff_findings_lower_the_score() -> None:
    code = "import os\nimport sys\n\ndef solution(n):\n    x = 1\n    return n\n"
    result = check(RuffLintEvaluator(select=["F"]), code)
    codes = sorted(f["code"] for f in result.metadata["findings"])
    assert codes == ["F401", "F401", "F841"]
    assert result.score == pytest.approx(1 - 3 / 5)
    assert "F401 line 1" in (result.comment or "")


def test_bandit_reports_by_severity() -> None:
    result = check(BanditSecurityEvaluator(), RISKY)
    by_severity = result.metadata["by_severity"]
    assert by_severity["HIGH"] >= 1
    assert result.score == 0.0
    assert "B602" in {f["test_id"] for f in result.metadata["findings"]}
    clean = check(BanditSecurityEvaluator(), CLEAN)
    assert clean.score == 1.0 and clean.feedback == "No security findings."


def test_missing_code_scores_zero() -> None:
    assert check(RuffLintEvaluator(), None).score == 0.0
    assert check(BanditSecurityEvaluator(), "").score == 0.0


def test_quality_evaluators_never_execute_the_code(tmp_path: object) -> None:
    marker = f"{tmp_path}/executed"
    code = f"open({marker!r}, 'w').write('x')\n"
    check(RuffLintEvaluator(), code)
    check(BanditSecurityEvaluator(), code)
    import os

    assert not os.path.exists(marker)


# -- C++: cppcheck --------------------------------------------------------------------------
CPP_FLAWED = """#include <vector>
int first(std::vector<int> v) {
    int a[3];
    a[3] = 1;
    char *p = new char[10];
    return v[0];
}
"""


def test_cppcheck_reports_each_finding_by_rule_and_line() -> None:
    result = check(CppcheckEvaluator(), f"```cpp\n{CPP_FLAWED}```")
    found = {(f["rule"], f["line"]) for f in result.metadata["findings"]}
    assert {("arrayIndexOutOfBounds", 4), ("memleak", 6)} <= found
    lines = 7
    assert result.score == pytest.approx(max(0.0, 1 - len(result.metadata["findings"]) / lines))
    assert "arrayIndexOutOfBounds line 4" in (result.comment or "")
    clean = check(CppcheckEvaluator(), "int add(int a, int b) { return a + b; }\n")
    assert (
        clean.score == 1.0 and clean.metadata["findings"] == [] and clean.feedback == "No cppcheck findings."
    )


def test_cppcheck_code_that_does_not_parse_scores_zero_and_comments_do_not_silence_it() -> None:
    broken = check(CppcheckEvaluator(), "int f( {\n")
    assert broken.score == 0 and broken.feedback == "The code does not parse."
    assert "Unmatched" in (broken.comment or "")
    silenced = CPP_FLAWED.replace(
        "    a[3] = 1;", "    // cppcheck-suppress arrayIndexOutOfBounds\n    a[3] = 1;"
    )
    rules = {f["rule"] for f in check(CppcheckEvaluator(), silenced).metadata["findings"]}
    assert "arrayIndexOutOfBounds" in rules  # inline suppressions are off


# -- Java: checkstyle -----------------------------------------------------------------------
JAVA_FLAWED = """import java.util.List;
class Solution {
    int f(int x) {
        if (x == 1) {}
        String s = "a";
        if (s == "b") return 2;
        switch (x) { case 1: x++; }
        return x;
    }
}
"""


def test_checkstyle_reports_each_finding_by_rule_and_line() -> None:
    result = check(CheckstyleEvaluator(), JAVA_FLAWED)
    found = {(f["rule"], f["line"]) for f in result.metadata["findings"]}
    assert found == {
        ("UnusedImports", 1),
        ("EmptyBlock", 4),
        ("StringLiteralEquality", 6),
        ("MissingSwitchDefault", 7),
    }
    assert result.score == pytest.approx(1 - 4 / 10)
    clean = check(CheckstyleEvaluator(), "class Solution {\n  int f(int x) {\n    return x + 1;\n  }\n}\n")
    assert clean.score == 1.0 and clean.feedback == "No checkstyle findings."


def test_checkstyle_code_that_does_not_parse_scores_zero_and_comments_do_not_silence_it() -> None:
    broken = check(CheckstyleEvaluator(), "class A { int f( { }\n")
    assert broken.score == 0 and "CheckstyleException" in (broken.comment or "")
    assert "\tat " not in (broken.comment or "")  # the message, not the JVM's stack
    silenced = "// CHECKSTYLE:OFF\n" + JAVA_FLAWED.replace("if (x == 1) {}", "if (x == 1) {} // NOCHECKSTYLE")
    found = check(CheckstyleEvaluator(), silenced).metadata
    assert "EmptyBlock" in {f["rule"] for f in found["findings"]}  # no suppression filter is configured
    assert found["suppressions"] == "ignored"
