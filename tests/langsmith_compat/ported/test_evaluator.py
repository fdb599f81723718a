"""Port of langsmith-sdk python/tests/unit_tests/evaluation/test_evaluator.py, in our words.

Each test keeps its upstream name, so TALLY.md maps one to one. The upstream tests pass
``MagicMock`` runs; here they are real ``Run`` and ``Example`` records. Where assay differs
on purpose (``evaluate_run`` never raises: a bad return is an errored result), the test
asserts assay's rule and TALLY.md says so.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import pytest

from assay.evaluation.evaluator import (
    ComparisonEvaluationResult,
    DynamicComparisonRunEvaluator,
    DynamicRunEvaluator,
    EvaluationResult,
    EvaluationResults,
    run_evaluator,
)
from assay.run_helpers import tracing_context
from assay.schemas import Example, Run


@pytest.fixture
def run_1() -> Run:
    return Run(inputs={"input": "1"}, outputs={"output": "2"})


@pytest.fixture
def example_1() -> Example:
    return Example(inputs={"input": "1"}, outputs={"output": "2"})


def _two_results(result: Any) -> None:
    assert not isinstance(result, EvaluationResult)
    assert "results" in result
    assert [(r.key, r.score) for r in result["results"]] == [("test", 1.0), ("test2", 2.0)]


def test_run_evaluator_decorator(run_1: Run, example_1: Example) -> None:
    @run_evaluator
    def sample_evaluator(run: Run, example: Example | None) -> EvaluationResult:
        return EvaluationResult(key="test", score=1.0)

    assert isinstance(sample_evaluator, DynamicRunEvaluator)
    with tracing_context(enabled=False):
        result = sample_evaluator.evaluate_run(run_1, example_1)
    assert isinstance(result, EvaluationResult)
    assert (result.key, result.score) == ("test", 1.0)


async def test_dynamic_comparison_run_evaluator() -> None:
    def foo(runs: list[Run], example: Example | None) -> ComparisonEvaluationResult:
        return ComparisonEvaluationResult(key="bar", scores={uuid.uuid4(): 3.1})

    async def afoo(runs: list[Run], example: Example | None) -> ComparisonEvaluationResult:
        return ComparisonEvaluationResult(key="bar", scores={uuid.uuid4(): 3.1})

    for evaluator in (
        DynamicComparisonRunEvaluator(foo),
        DynamicComparisonRunEvaluator(afoo),
        DynamicComparisonRunEvaluator(foo, afoo),
    ):
        assert (await evaluator.acompare_runs([], None)).key == "bar"
        assert "foo" in repr(evaluator)


def test_dynamic_comparison_run_evaluator_sync_call_async_evaluator() -> None:
    async def afoo(runs: list[Run], example: Example | None) -> ComparisonEvaluationResult:
        return ComparisonEvaluationResult(key="bar", scores={uuid.uuid4(): 3.1})

    assert DynamicComparisonRunEvaluator(afoo).compare_runs([], None).key == "bar"


def test_run_evaluator_decorator_dict(run_1: Run, example_1: Example) -> None:
    @run_evaluator
    def sample_evaluator(run: Run, example: Example | None) -> dict[str, Any]:
        return {"key": "test", "score": 1.0}

    result = sample_evaluator.evaluate_run(run_1, example_1)
    assert isinstance(result, EvaluationResult)
    assert (result.key, result.score) == ("test", 1.0)


def test_run_evaluator_decorator_dict_no_key(run_1: Run, example_1: Example) -> None:
    @run_evaluator
    def sample_evaluator(run: Run, example: Example | None) -> dict[str, Any]:
        return {"score": 1.0}

    result = sample_evaluator.evaluate_run(run_1, example_1)
    assert isinstance(result, EvaluationResult)
    assert (result.key, result.score) == ("sample_evaluator", 1.0)


def test_run_evaluator_decorator_dict_with_comment(run_1: Run, example_1: Example) -> None:
    @run_evaluator
    def sample_evaluator(run: Run, example: Example | None) -> dict[str, Any]:
        return {"score": 1.0, "comment": "test"}

    result = sample_evaluator.evaluate_run(run_1, example_1)
    assert isinstance(result, EvaluationResult)
    assert (result.key, result.score, result.comment) == ("sample_evaluator", 1.0, "test")


def test_run_evaluator_decorator_multi_return(run_1: Run, example_1: Example) -> None:
    @run_evaluator
    def sample_evaluator(run: Run, example: Example | None) -> dict[str, Any]:
        return {"results": [{"key": "test", "score": 1.0}, {"key": "test2", "score": 2.0}]}

    with tracing_context(enabled=False):
        _two_results(sample_evaluator.evaluate_run(run_1, example_1))


def test_run_evaluator_decorator_multi_return_no_key(run_1: Run, example_1: Example) -> None:
    """Documented difference: LangSmith raises ValueError; assay returns an errored result
    naming the item without a key (a list item needs its own key)."""

    @run_evaluator
    def sample_evaluator(run: Run, example: Example | None) -> dict[str, Any]:
        return {"results": [{"score": 1.0}, {"key": "test2", "score": 2.0}]}

    result = sample_evaluator.evaluate_run(run_1, example_1)
    assert isinstance(result, EvaluationResult)
    assert result.error is not None and "key" in result.error


def test_run_evaluator_decorator_return_multi_evaluation_result(run_1: Run, example_1: Example) -> None:
    @run_evaluator
    def sample_evaluator(run: Run, example: Example | None) -> EvaluationResults:
        return EvaluationResults(
            results=[EvaluationResult(key="test", score=1.0), EvaluationResult(key="test2", score=2.0)]
        )

    _two_results(sample_evaluator.evaluate_run(run_1, example_1))


async def test_run_evaluator_decorator_async(run_1: Run, example_1: Example) -> None:
    @run_evaluator
    async def sample_evaluator(run: Run, example: Example | None) -> EvaluationResult:
        await asyncio.sleep(0)
        return EvaluationResult(key="test", score=1.0)

    result = await sample_evaluator.aevaluate_run(run_1, example_1)
    assert isinstance(result, EvaluationResult)
    assert (result.key, result.score) == ("test", 1.0)


def test_run_evaluator_decorator_async_sync_call(run_1: Run, example_1: Example) -> None:
    @run_evaluator
    async def sample_evaluator(run: Run, example: Example | None) -> EvaluationResult:
        await asyncio.sleep(0)
        return EvaluationResult(key="test", score=1.0)

    result = sample_evaluator.evaluate_run(run_1, example_1)
    assert isinstance(result, EvaluationResult)
    assert (result.key, result.score) == ("test", 1.0)


async def test_run_evaluator_decorator_dict_async(run_1: Run, example_1: Example) -> None:
    @run_evaluator
    async def sample_evaluator(run: Run, example: Example | None) -> dict[str, Any]:
        return {"key": "test", "score": 1.0}

    result = await sample_evaluator.aevaluate_run(run_1, example_1)
    assert isinstance(result, EvaluationResult)
    assert (result.key, result.score) == ("test", 1.0)


async def test_run_evaluator_decorator_dict_no_key_async(run_1: Run, example_1: Example) -> None:
    @run_evaluator
    async def sample_evaluator(run: Run, example: Example | None) -> dict[str, Any]:
        return {"score": 1.0}

    result = await sample_evaluator.aevaluate_run(run_1, example_1)
    assert isinstance(result, EvaluationResult)
    assert (result.key, result.score) == ("sample_evaluator", 1.0)


async def test_run_evaluator_decorator_dict_with_comment_async(run_1: Run, example_1: Example) -> None:
    @run_evaluator
    async def sample_evaluator(run: Run, example: Example | None) -> dict[str, Any]:
        return {"score": 1.0, "comment": "test"}

    result = await sample_evaluator.aevaluate_run(run_1, example_1)
    assert isinstance(result, EvaluationResult)
    assert (result.key, result.score, result.comment) == ("sample_evaluator", 1.0, "test")


async def test_run_evaluator_decorator_multi_return_async(run_1: Run, example_1: Example) -> None:
    response = {"results": [{"key": "test", "score": 1.0}, {"key": "test2", "score": 2.0}]}

    @run_evaluator
    async def sample_evaluator(run: Run, example: Example | None) -> dict[str, Any]:
        return response

    @run_evaluator
    def sample_sync_evaluator(run: Run, example: Example | None) -> dict[str, Any]:
        return response

    _two_results(await sample_evaluator.aevaluate_run(run_1, example_1))
    _two_results(await sample_sync_evaluator.aevaluate_run(run_1, example_1))
    _two_results(sample_sync_evaluator.evaluate_run(run_1, example_1))


async def test_run_evaluator_decorator_multi_return_no_key_async(run_1: Run, example_1: Example) -> None:
    """Documented difference, as in the sync test: an errored result instead of ValueError."""

    @run_evaluator
    async def sample_evaluator(run: Run, example: Example | None) -> dict[str, Any]:
        return {"results": [{"score": 1.0}, {"key": "test2", "score": 2.0}]}

    result = await sample_evaluator.aevaluate_run(run_1, example_1)
    assert isinstance(result, EvaluationResult)
    assert result.error is not None and "key" in result.error


async def test_run_evaluator_decorator_return_multi_evaluation_result_async(
    run_1: Run, example_1: Example
) -> None:
    @run_evaluator
    async def sample_evaluator(run: Run, example: Example | None) -> EvaluationResults:
        return EvaluationResults(
            results=[EvaluationResult(key="test", score=1.0), EvaluationResult(key="test2", score=2.0)]
        )

    _two_results(await sample_evaluator.aevaluate_run(run_1, example_1))


def _assert_errored(result: Any, needle: str) -> None:
    assert isinstance(result, EvaluationResult), result
    assert result.score is None
    assert result.error is not None and needle in result.error, result.error


@pytest.mark.parametrize("response", [None, {}, []])
async def test_evaluator_raises_for_null_output(response: Any) -> None:
    """Documented difference: LangSmith raises ``ValueError("Expected a non-empty ...")``;
    assay returns an errored result naming the evaluator (evaluators never raise)."""

    @run_evaluator
    def bad_evaluator(run: Run, example: Example) -> Any:
        return response

    @run_evaluator
    async def abad_evaluator(run: Run, example: Example) -> Any:
        return response

    run, example = Run(), Example()
    _assert_errored(bad_evaluator.evaluate_run(run, example), "bad_evaluator")
    _assert_errored(await bad_evaluator.aevaluate_run(run, example), "bad_evaluator")
    _assert_errored(await abad_evaluator.aevaluate_run(run, example), "bad_evaluator")


@pytest.mark.parametrize("response", [[5], {"accuracy": 5}])
async def test_evaluator_raises_for_bad_output(response: Any) -> None:
    """Documented difference, as above: an errored result instead of ValueError."""

    @run_evaluator
    def bad_evaluator(run: Run, example: Example) -> Any:
        return response

    @run_evaluator
    async def abad_evaluator(run: Run, example: Example) -> Any:
        return response

    run, example = Run(), Example()
    _assert_errored(bad_evaluator.evaluate_run(run, example), "bad_evaluator")
    _assert_errored(await bad_evaluator.aevaluate_run(run, example), "bad_evaluator")
    _assert_errored(await abad_evaluator.aevaluate_run(run, example), "abad_evaluator")


_NUMERIC_VALUE = "Numeric values should be provided in the 'score' field, not 'value'."


def test_check_value_non_numeric(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        EvaluationResult(key="test", value=5)
    assert f"{_NUMERIC_VALUE} Got: 5" in caplog.text

    for fields in ({"score": 5, "value": "non-numeric"}, {}, {"value": "non-numeric"}):
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            EvaluationResult(key="test", **fields)
        assert _NUMERIC_VALUE not in caplog.text
