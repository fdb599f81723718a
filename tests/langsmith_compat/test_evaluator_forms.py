"""Evaluator forms LangSmith code uses: dict-like EvaluationResults, integer scores,
legacy ``(run, example)`` functions with keyword options, comparative evaluators and the
``evaluate((exp_a, exp_b), evaluators=[...])`` form."""

from __future__ import annotations

import uuid

import pytest

import assay
from assay import Client, Example, Run, evaluate
from assay.evaluation import (
    ComparisonEvaluationResult,
    DynamicComparisonRunEvaluator,
    EvaluationResult,
    EvaluationResults,
    comparison_evaluator,
    run_evaluator,
)

DATA = [{"inputs": {"x": i}, "outputs": {"y": 2 * i}} for i in range(4)]
RUN = Run(inputs={"x": 1}, outputs={"y": 2})
EXAMPLE = Example(inputs={"x": 1}, outputs={"y": 2})


def test_several_results_read_like_langsmiths_dict() -> None:
    @run_evaluator
    def two(run: Run, example: Example) -> dict:
        return {"results": [{"key": "a", "score": 1}, {"key": "b", "value": "x"}]}

    returned = two.evaluate_run(RUN, EXAMPLE)
    assert isinstance(returned, EvaluationResults)
    assert [r.key for r in returned["results"]] == ["a", "b"]
    assert returned.get("results") is returned.results and returned.get("other", 5) == 5
    assert "results" in returned and list(returned.keys()) == ["results"]
    with pytest.raises(KeyError):
        returned["nothing"]


def test_integer_scores_stay_integers_from_every_return_form() -> None:
    @run_evaluator
    def plain(outputs: dict) -> int:
        return 3

    @run_evaluator
    def as_dict(outputs: dict) -> dict:
        return {"key": "d", "score": 4}

    for evaluator, expected in ((plain, 3), (as_dict, 4)):
        result = evaluator.evaluate_run(RUN, EXAMPLE)
        assert isinstance(result, EvaluationResult)
        assert result.score == expected and type(result.score) is int
    assert type(EvaluationResult(key="k", score=0.5).score) is float


def test_legacy_evaluators_may_take_keyword_options(client: Client) -> None:
    def close_enough(r: Run, e: Example, *, threshold: float = 0.5) -> dict:
        return {"key": "close", "score": abs(r.outputs["y"] - e.outputs["y"]) < threshold}

    results = evaluate(
        lambda inputs: {"y": 2 * inputs["x"] + 0.1}, data=DATA, evaluators=[close_enough], client=client
    )
    assert [row["evaluation_results"]["results"][0].score for row in results] == [True] * 4


def test_a_legacy_evaluator_with_a_required_option_is_refused(client: Client) -> None:
    def needs(r: Run, e: Example, *, threshold: float) -> bool:
        return True

    with pytest.raises(assay.EvaluatorSignatureError, match="threshold"):
        evaluate(lambda inputs: {}, data=DATA, evaluators=[needs], client=client)


def test_run_evaluator_is_top_level() -> None:
    assert assay.RunEvaluator is assay.evaluation.RunEvaluator
    from assay.evaluation.evaluator import RunEvaluator

    assert RunEvaluator is assay.RunEvaluator


def two_runs() -> list[Run]:
    return [Run(id=uuid.UUID(int=1), outputs={"y": 2}), Run(id=uuid.UUID(int=2), outputs={"y": 3})]


def test_comparison_evaluator_return_forms() -> None:
    runs = two_runs()

    @comparison_evaluator
    def as_list(runs: list[Run], example: Example) -> list[int]:
        return [1, 0]

    @comparison_evaluator
    def as_dict(outputs: list[dict], reference_outputs: dict) -> dict:
        return {
            "scores": {run.id: int(o == reference_outputs) for run, o in zip(runs, outputs)},
            "comment": "first matches",
        }

    def as_result(a: list[Run], b: Example) -> ComparisonEvaluationResult:
        return ComparisonEvaluationResult(key="given", scores={a[0].id: 0.5, a[1].id: 0.5})

    assert isinstance(as_list, DynamicComparisonRunEvaluator)
    listed = as_list.compare_runs(runs, EXAMPLE)
    assert listed.key == "as_list" and listed.scores == {runs[0].id: 1, runs[1].id: 0}
    assert listed.source_run_id is not None
    named = as_dict(runs, EXAMPLE)
    assert named.scores == {runs[0].id: 1, runs[1].id: 0} and named.comment == "first matches"
    assert comparison_evaluator(as_result).compare_runs(runs, EXAMPLE).key == "given"


async def test_async_comparison_evaluator_and_bad_returns() -> None:
    runs = two_runs()

    @comparison_evaluator
    async def prefers_second(runs: list[Run], example: Example) -> list[float]:
        return [0.0, 1.0]

    result = await prefers_second.acompare_runs(runs, EXAMPLE)
    assert result.scores == {runs[0].id: 0.0, runs[1].id: 1.0}

    @comparison_evaluator
    def wrong_length(runs: list[Run], example: Example) -> list[int]:
        return [1]

    with pytest.raises(ValueError, match="1 scores for 2 runs"):
        wrong_length(runs, EXAMPLE)
    with pytest.raises(TypeError, match="take \\(runs, example\\)"):
        comparison_evaluator(lambda a, b, c: None)


def test_evaluate_with_a_tuple_compares_the_experiments(client: Client) -> None:
    first = evaluate(lambda inputs: {"y": 2 * inputs["x"]}, data=DATA, client=client, experiment="good")
    second = evaluate(lambda inputs: {"y": 0}, data=DATA, client=client, experiment="bad")

    @comparison_evaluator
    def right(runs: list[Run], example: Example) -> list[int]:
        return [int(run.outputs == example.outputs) for run in runs]

    compared = evaluate(("good", second), evaluators=[right], client=client, experiment="good-vs-bad")
    assert compared.name == "good-vs-bad"
    rates = compared.win_rates("right")
    assert rates == {"good": 1.0, "bad": 0.25}  # x=0 gives y=0 for both
    assert len(client.store.list_comparisons("good-vs-bad")) == 4
    assert first.experiment_name == "good"
    with pytest.raises(ValueError, match="summary_evaluators"):
        evaluate(("good", "bad"), evaluators=[right], summary_evaluators=[len], client=client)


async def test_a_comparison_evaluator_with_sync_and_async_forms() -> None:
    def both(runs: list[Run], example: Example | None) -> ComparisonEvaluationResult:
        return ComparisonEvaluationResult(key="sync", scores={})

    async def aboth(runs: list[Run], example: Example | None) -> ComparisonEvaluationResult:
        return ComparisonEvaluationResult(key="async", scores={})

    evaluator = DynamicComparisonRunEvaluator(both, aboth)
    assert (await evaluator.acompare_runs([], None)).key == "async"
    assert evaluator.compare_runs([], None).key == "sync"
    with pytest.raises(TypeError, match="coroutine function and afunc"):
        DynamicComparisonRunEvaluator(aboth, aboth)
    assert DynamicComparisonRunEvaluator(aboth).compare_runs([], None).key == "async"
    assert repr(evaluator) == "<DynamicComparisonRunEvaluator both>"


def test_feedback_config_is_a_field() -> None:
    assert EvaluationResult(key="k", value="ok").feedback_config is None
    config = {"type": "continuous", "min": 0.0, "max": 1.0, "custom": True}
    assert EvaluationResult(key="k", score=0.5, feedback_config=config).feedback_config == config
