"""Honest code gets an honest verdict: no timeout because others were slow, the tolerance
of math.isclose (not an absolute 1e-9 everywhere), configurable per evaluator and case."""

from __future__ import annotations

import math
import sys
from typing import Any

import pytest

import assay
from assay.evaluation import EvaluationResult
from assay.evaluators import CodeCorrectnessEvaluator
from assay.sandbox import SandboxConfig, values_equal
from assay.schemas import Example, Run

fixtures = sys.modules["assay_tests_sandbox_fixtures"]  # tests/_sandbox_fixtures.py
BACKENDS = fixtures.BACKENDS


pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")

CORRECT = "def solution(n):\n    return n * n\n"
HOSTILE = "def solution(n):\n    while True:\n        pass\n"
CASES = [{"input": 3, "expected_output": 9}, {"input": -2, "expected_output": 4}]
HUMANEVAL_TEST = "def check(candidate):\n    assert candidate(3) == 9\n    assert candidate(-2) == 4\n"


def _rows(count: int, hostile_every: int, mode: str) -> list[dict[str, Any]]:
    rows = []
    for index in range(count):
        code = HOSTILE if index % hostile_every == 0 else CORRECT
        inputs: dict[str, Any] = {"answer": code, "hostile": code == HOSTILE}
        if mode == "cases":
            inputs["test_cases"] = CASES
        else:
            inputs.update(test=HUMANEVAL_TEST, entry_point="solution", prompt="")
        rows.append({"inputs": inputs})
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["cases", "program"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_hostile_loops_under_concurrency_never_time_out_correct_code(backend: str, mode: str) -> None:
    evaluator = CodeCorrectnessEvaluator(execution_timeout=1, sandbox=SandboxConfig(backend=backend))
    results = assay.evaluate(
        lambda inputs: {"text": inputs["answer"]},
        data=_rows(48, 8, mode),
        evaluators=[evaluator],
        max_concurrency=16,
        client=assay.Client(database_url="sqlite://"),
        progress=False,
    )
    verdicts = [
        (row["example"].inputs["hostile"], row["evaluation_results"]["results"][0]) for row in results
    ]
    wrong = [r.comment for hostile, r in verdicts if not hostile and r.score != 1.0]
    assert wrong == [], f"{len(wrong)} correct candidates failed, e.g. {wrong[:2]}"
    hostile = [r for is_hostile, r in verdicts if is_hostile]
    assert len(hostile) == 6
    assert all(r.score == 0.0 and r.error is None and r.metadata["timed_out"] for r in hostile)


def evaluate(code: str, cases: list[dict[str, Any]], **options: Any) -> EvaluationResult:
    evaluator = CodeCorrectnessEvaluator(execution_timeout=10, **options)
    result = evaluator.evaluate(Run(outputs={"text": code}), Example(inputs={"test_cases": cases}))
    assert isinstance(result, EvaluationResult)
    return result


def test_tiny_values_are_not_all_equal() -> None:
    assert not values_equal(1e-15, 5e-10)
    assert not values_equal(-1e-300, 1e-300)
    assert values_equal(0.1 + 0.2, 0.3)
    assert values_equal(0.0, math.sin(math.pi))  # near 0, a tiny absolute tolerance
    assert not values_equal(0.0, 1e-9)
    assert values_equal(1e308 * 10, math.inf) and not values_equal(math.inf, -math.inf)
    assert values_equal(-0.0, 0.0) and values_equal(math.nan, math.nan)
    assert not values_equal(10**400, 1e308) and not values_equal(1.5, 10**5000)


def test_a_wrong_tiny_float_fails_and_the_right_one_passes() -> None:
    cases = [{"input": 0, "expected_output": 1e-15}]
    assert evaluate("def solution(x):\n    return 5e-10\n", cases).score == 0.0
    assert evaluate("def solution(x):\n    return 1e-15 * (1 + 1e-12)\n", cases).score == 1.0


def test_tolerance_is_configurable_per_evaluator_and_per_case() -> None:
    code = "def solution(x):\n    return x + 0.001\n"
    strict = [{"input": 1.0, "expected_output": 1.0}]
    assert evaluate(code, strict).score == 0.0
    assert evaluate(code, strict, float_tolerance=1e-2).score == 1.0
    assert evaluate(code, strict, abs_tolerance=0.01).score == 1.0
    per_case = [
        {"input": 1.0, "expected_output": 1.0, "abs_tol": 0.01},
        {"input": 2.0, "expected_output": 2.0},
    ]
    assert evaluate(code, per_case).score == 0.5
    near_zero = [{"input": -0.001, "expected_output": 0.0, "zero_tol": 0.0}]
    assert evaluate("def solution(x):\n    return x + 0.001 - 1e-18\n", near_zero).score == 0.0
    from assay.sandbox.equality import Tolerance

    with pytest.raises(ValueError, match="rel_tol must be a finite number"):
        Tolerance(rel_tol=-1)
    bad = evaluate(code, [{"input": 1.0, "expected_output": 1.0, "rel_tol": "x"}])
    assert bad.score == 0.0 and "test case #0" in (bad.comment or "")
