"""One outcome model: a result is a score, an error or skipped, and a failed target never
scores by accident."""

from __future__ import annotations

import pytest

import assay
from assay import Client, EvaluationResult
from assay.evaluation._names import EVALUATOR_NAMES
from assay.report.terminal import metrics_table


@pytest.fixture
def client(any_client: Client) -> Client:
    """The tests here exercise the store: each runs on SQLite and on PostgreSQL."""
    return any_client


def sometimes_fails(inputs: dict) -> dict:
    if inputs["x"] % 3 == 0:
        raise RuntimeError("model timed out")
    return {"output": str(inputs["x"])}


def takes_outputs(outputs) -> float:  # would score 1.0 on an empty output
    return 1.0


def takes_run(run) -> bool:
    return run.outputs is not None


def takes_kwargs(**kwargs) -> float:
    return 0.0


def legacy(run, example) -> float:
    return 0.0


def only_inputs(inputs, reference_outputs) -> float:  # cannot see outputs: still called
    return 0.5


@assay.metric(needs_outputs=False)
def target_failed(run) -> bool:
    return run.error is not None


DATA = [{"inputs": {"x": i}, "outputs": {"output": str(i)}} for i in range(9)]


def _by_outcome(results, key: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in results:
        for result in row["evaluation_results"]["results"]:
            if result.key == key:
                counts[result.outcome] = counts.get(result.outcome, 0) + 1
    return counts


@pytest.mark.parametrize("evaluator", [takes_outputs, takes_run, takes_kwargs, legacy])
def test_functions_that_see_outputs_are_skipped_on_a_failed_target(client: Client, evaluator) -> None:
    results = client.evaluate(sometimes_fails, data=DATA, evaluators=[evaluator])
    key = evaluator.__name__
    assert _by_outcome(results, key) == {"score": 6, "skipped": 3}
    aggregate = results.aggregate[key]
    assert (aggregate.n, aggregate.errors, aggregate.skipped) == (6, 0, 3)
    stored = client.read_experiment(results.experiment_name).aggregate[key]
    assert (stored.n, stored.skipped) == (6, 3)


def test_functions_that_cannot_see_outputs_and_opted_in_ones_are_called(client: Client) -> None:
    results = client.evaluate(sometimes_fails, data=DATA, evaluators=[only_inputs, target_failed])
    assert _by_outcome(results, "only_inputs") == {"score": 9}
    assert results.aggregate["target_failed"].mean == pytest.approx(3 / 9)


@pytest.mark.parametrize(
    "name",
    sorted(
        set(EVALUATOR_NAMES)
        - {"qa", "cot_qa", "context_qa", "criteria", "labeled_criteria", "embedding_distance"}
    ),
)
def test_every_built_in_evaluator_is_skipped_on_a_failed_target(client: Client, name: str) -> None:
    def fails(inputs: dict) -> dict:
        raise RuntimeError("no answer")

    results = client.evaluate(fails, data=DATA[:2], evaluators=[name])
    outcomes = [r.outcome for row in results for r in row["evaluation_results"]["results"]]
    assert outcomes == ["skipped", "skipped"], outcomes


def test_a_judge_makes_no_call_on_a_failed_target(client: Client) -> None:
    from assay.evaluators.judge import CriteriaEvaluator
    from assay.testing import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        judge = CriteriaEvaluator(criteria="conciseness", model=server.chat_model())
        results = client.evaluate(lambda inputs: 1 / 0, data=DATA[:3], evaluators=[judge])
        assert server.chat_requests == []
    assert results.aggregate[judge.name].skipped == 3


def test_declared_direction_and_range_reach_the_store_and_the_report(client: Client) -> None:
    @assay.metric(direction="lower", score_range=(0, None))
    def latency_ms(inputs) -> float:
        return 10.0 * inputs["x"]

    def judged(outputs) -> dict:
        return {"score": 0.2, "direction": "lower", "score_range": [0, 1]}

    results = client.evaluate(lambda inputs: {"output": "x"}, data=DATA, evaluators=[latency_ms, judged])
    stored = client.read_experiment(results.experiment_name)
    for key in ("latency_ms", "judged"):
        assert stored.aggregate[key].direction == "lower"
    first = next(iter(stored))["evaluation_results"]["results"]
    assert [r.direction for r in first] == ["lower", "lower"]
    assert first[0].score_range == (0.0, None) and first[1].score_range == (0.0, 1.0)
    assert "judged" not in str(first[1].metadata)  # read as a declaration, not as metadata
    row = [cell for cell in metrics_table(stored).columns[1].cells]
    assert row == ["↓", "↓"]


def test_bad_declarations_are_refused_with_the_parameter_named() -> None:
    with pytest.raises(ValueError, match="direction must be 'higher' or 'lower'"):
        assay.metric(direction="up")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="score_range must have low <= high"):
        assay.metric(score_range=(1, 0))
    with pytest.raises(ValueError, match="direction must be 'higher' or 'lower'"):
        EvaluationResult(key="k", score=1, direction="better")


def test_built_in_distances_are_lower_is_better_and_exactly_zero_when_identical(client: Client) -> None:
    from assay.evaluators.text.embedding import DISTANCES
    from assay.evaluators.text.string import StringDistanceEvaluator

    vector = [0.1, 0.2, 0.7000000000000001, 1e-3]
    for name, measure in DISTANCES.items():
        assert measure(vector, list(vector)) == 0.0, name
    for distance in ("levenshtein", "jaro", "jaro_winkler", "hamming", "indel", "damerau_levenshtein"):
        try:
            evaluator = StringDistanceEvaluator(distance=distance)  # type: ignore[arg-type]
        except ValueError:
            continue
        results = client.evaluate(
            lambda inputs: {"output": "same text é"},
            data=[{"inputs": {"x": 1}, "outputs": {"output": "same text é"}}],
            evaluators=[evaluator],
        )
        [result] = next(iter(results))["evaluation_results"]["results"]
        assert result.score == 0.0 and result.direction == "lower", distance
