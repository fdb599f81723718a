"""The return type carries the meaning; one normalizer for row and summary evaluators."""

from __future__ import annotations

import math

import pytest

from assay import Client, evaluate
from assay.evaluation import EvaluationResult, EvaluationResults


def echo(inputs: dict) -> dict:
    return {"y": inputs["x"]}


def only_row(results) -> list[EvaluationResult]:
    rows = list(results)
    assert len(rows) == 1
    return rows[0]["evaluation_results"]["results"]


DATA = [{"inputs": {"x": 3}, "outputs": {"y": 3}}]


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        (True, {"key": "metric", "score": True}),
        (0, {"key": "metric", "score": 0.0}),
        (0.25, {"key": "metric", "score": 0.25}),
        ("excellent", {"key": "metric", "value": "excellent", "score": None}),
        ({"score": 0.5, "comment": "half"}, {"key": "metric", "score": 0.5, "comment": "half"}),
        ({"key": "named", "score": 1}, {"key": "named", "score": 1.0}),
        (
            {"name": "by_name", "value": "A", "feedback": "ok"},
            {"key": "by_name", "value": "A", "feedback": "ok"},
        ),
        ({"score": 1, "metadata": {"a": 1}}, {"key": "metric", "metadata": {"a": 1}}),
        ({"score": 1, "reasoning": "why"}, {"key": "metric", "metadata": {"reasoning": "why"}}),
        (EvaluationResult(key="explicit", score=0.75), {"key": "explicit", "score": 0.75}),
    ],
)
def test_single_result_forms(client: Client, returned, expected: dict) -> None:
    def metric(outputs):
        return returned

    [result] = only_row(evaluate(echo, data=DATA, evaluators=[metric], client=client))
    assert result.error is None
    for field, value in expected.items():
        assert getattr(result, field) == value, field


@pytest.mark.parametrize(
    "returned",
    [
        EvaluationResults(results=[EvaluationResult(key="a", score=1), EvaluationResult(key="b", score=0)]),
        {"results": [{"key": "a", "score": 1}, {"key": "b", "score": 0}]},
        [{"key": "a", "score": 1}, EvaluationResult(key="b", score=0)],
    ],
)
def test_several_metrics_forms(client: Client, returned) -> None:
    def several(outputs):
        return returned

    results = evaluate(echo, data=DATA, evaluators=[several], client=client)
    assert [(r.key, r.score) for r in only_row(results)] == [("a", 1), ("b", 0)]
    assert set(results.aggregate) == {"a", "b"}


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (math.nan, "non-finite score"),
        (float("inf"), "non-finite score"),
        ({"score": math.inf}, "non-finite score"),
        (None, "returned NoneType"),
        (object(), "returned object"),
        ({"score": "high"}, "score must be a bool or a number"),
        ([1, 2], "list holding int"),
    ],
)
def test_unreadable_returns_are_errors_not_numbers(client: Client, returned, message: str) -> None:
    def metric(outputs):
        return returned

    results = evaluate(echo, data=DATA, evaluators=[metric], client=client)
    [result] = only_row(results)
    assert result.score is None and message in result.error
    aggregate = results.aggregate["metric"]
    assert aggregate.n == 0 and aggregate.errors == 1 and aggregate.mean is None


def test_key_defaults_to_the_evaluator_name(client: Client) -> None:
    def my_metric(outputs):
        return 1

    [result] = only_row(evaluate(echo, data=DATA, evaluators=[my_metric], client=client))
    assert result.key == "my_metric"


def test_evaluation_result_refuses_non_finite_score() -> None:
    with pytest.raises(ValueError, match="finite"):
        EvaluationResult(key="k", score=float("nan"))
