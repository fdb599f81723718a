"""pass@k: the estimator, the summary evaluator alone, and end to end with repetitions."""

from __future__ import annotations

import itertools
import threading
import uuid
from math import comb
from typing import Any

import pytest

import assay
from assay.evaluation import EvaluationResult
from assay.evaluators import CodeCorrectnessEvaluator, pass_at_k
from assay.evaluators.code import pass_at_k_estimate
from assay.schemas import Example, Run


def chen_numpy_free(n: int, c: int, k: int) -> float:
    """The product form from Chen et al.'s reference code."""
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


@pytest.mark.parametrize(
    "n, c, k", [(10, 3, 1), (10, 3, 5), (200, 7, 10), (5, 0, 2), (5, 5, 5), (4, 2, 2), (1, 1, 1)]
)
def test_estimator_matches_the_reference(n: int, c: int, k: int) -> None:
    assert pass_at_k_estimate(n, c, k) == pytest.approx(chen_numpy_free(n, c, k))
    assert pass_at_k_estimate(n, c, k) == pytest.approx(1 - comb(n - c, k) / comb(n, k))


def test_estimator_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError, match="n=3, c=4"):
        pass_at_k_estimate(3, 4, 1)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        pass_at_k(0)


def rows(pattern: dict[str, list[Any]], key: str = "CodeCorrectnessEvaluator") -> dict[str, Any]:
    """Summary-evaluator arguments: one entry per (example, repetition), in data order."""
    examples, results = [], []
    for name, scores in pattern.items():
        example = Example(id=uuid.uuid5(uuid.NAMESPACE_DNS, name), inputs={})
        for score in scores:
            examples.append(example)
            result = (
                EvaluationResult(key=key, error="sandbox unavailable")
                if score == "error"
                else EvaluationResult(key=key, score=score)
            )
            results.append([EvaluationResult(key="other", score=1.0), result])
    return {"runs": [Run() for _ in examples], "examples": examples, "evaluation_results": results}


def test_summary_averages_per_example_estimates() -> None:
    data = rows({"a": [1.0, 0.0, 0.0, 1.0], "b": [0.0, 0.0, 0.0, 0.0], "c": [1.0, 1.0, 0.5, 1.0]})
    result = pass_at_k(2)(**data)
    expected = (pass_at_k_estimate(4, 2, 2) + 0.0 + pass_at_k_estimate(4, 3, 2)) / 3
    assert result.key == "pass@2"
    assert result.score == pytest.approx(expected)
    assert result.metadata["examples"] == 3
    assert pass_at_k(1)(**data).score == pytest.approx((0.5 + 0 + 0.75) / 3)


def test_errored_samples_are_left_out_and_short_examples_skipped() -> None:
    data = rows({"a": [1.0, "error", 0.0], "b": [1.0]})
    result = pass_at_k(2)(**data)
    assert result.score == pytest.approx(pass_at_k_estimate(2, 1, 2))
    assert list(result.metadata["skipped"].values()) == [{"samples": 1, "errored": 0}]
    nothing = pass_at_k(5)(**data)
    assert nothing.score is None
    assert "needs at least 5 scored samples" in (nothing.error or "")


def test_custom_key() -> None:
    data = rows({"a": [1.0, 0.0]}, key="PythonCodeCorrectness")
    assert pass_at_k(1, key="PythonCodeCorrectness")(**data).score == 0.5
    assert pass_at_k(1)(**data).error is not None


@pytest.mark.slow
def test_end_to_end_with_repetitions() -> None:
    """Each example gets 4 samples: the first two correct, the last two wrong."""
    calls: dict[str, itertools.count[int]] = {}
    lock = threading.Lock()
    square = [{"input": 3, "expected_output": 9}, {"input": -2, "expected_output": 4}]
    double = [{"input": 3, "expected_output": 6}]

    def generate(inputs: dict[str, Any]) -> dict[str, str]:
        with lock:
            attempt = next(calls.setdefault(inputs["task"], itertools.count()))
        op = {"square": "n * n", "double": "n + n"}[inputs["task"]] if attempt < 2 else "n - 1"
        return {"text": f"```python\ndef solution(n):\n    return {op}\n```"}

    results = assay.evaluate(
        generate,
        data=[
            {"inputs": {"task": "square", "test_cases": square}},
            {"inputs": {"task": "double", "test_cases": double}},
        ],
        evaluators=[CodeCorrectnessEvaluator(execution_timeout=10)],
        summary_evaluators=[pass_at_k(1), pass_at_k(2), pass_at_k(4)],
        num_repetitions=4,
        client=assay.Client(database_url="sqlite://"),
        progress=False,
    )
    summary = {r.key: r.score for r in results.summary_results.results}
    assert summary["pass@1"] == pytest.approx(0.5)
    assert summary["pass@2"] == pytest.approx(1 - 1 / 6)
    assert summary["pass@4"] == pytest.approx(1.0)
    assert results.aggregate["CodeCorrectnessEvaluator"].mean == pytest.approx(0.5)
