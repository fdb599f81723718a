"""RuffLintEvaluator and BanditSecurityEvaluator on real tool runs."""

from __future__ import annotations

import pytest

from assay.evaluation import EvaluationResult
from assay.evaluators import BanditSecurityEvaluator, RuffLintEvaluator
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
