"""Failures are data: stored with tracebacks, counted apart, never averaged as zero."""

from __future__ import annotations

import pytest

from assay import Client
from assay.evaluation import RowFailedError


def flaky_target(inputs: dict) -> dict:
    if inputs["x"] == 2:
        raise RuntimeError("model timed out")
    return {"y": 2 * inputs["x"]}


def correct(outputs, reference_outputs) -> bool:
    return outputs.get("y") == reference_outputs["y"]


def picky(outputs) -> float:
    if outputs["y"] == 6:
        raise ValueError("cannot judge six")
    return 1.0


def test_target_error_is_stored_and_evaluators_needing_outputs_are_skipped(
    client: Client, examples: list[dict]
) -> None:
    results = client.evaluate(flaky_target, data=examples, evaluators=[correct])
    rows = list(results)
    failed = rows[2]
    assert failed["run"].error == "RuntimeError: model timed out"
    assert "raise RuntimeError" in failed["run"].extra["traceback"]
    assert failed["run"].outputs is None
    [verdict] = failed["evaluation_results"]["results"]
    assert verdict.skipped and verdict.outcome == "skipped"
    assert verdict.score is None and verdict.error is None
    assert results.target_errors == 1
    stored = client.read_experiment(results.experiment_name)
    assert list(stored)[2]["run"].error == "RuntimeError: model timed out"


def test_evaluator_error_is_a_result_with_traceback_not_a_zero(client: Client, examples: list[dict]) -> None:
    results = client.evaluate(lambda inputs: {"y": 2 * inputs["x"]}, data=examples, evaluators=[picky])
    errored = [r for row in results for r in row["evaluation_results"]["results"] if r.error]
    assert len(errored) == 1
    [result] = errored
    assert result.key == "picky" and result.score is None
    assert result.error == "ValueError: cannot judge six"
    assert "cannot judge six" in result.metadata["traceback"]
    aggregate = results.aggregate["picky"]
    assert (aggregate.mean, aggregate.n, aggregate.errors) == (1.0, 5, 1)
    stored = client.read_experiment(results.experiment_name).aggregate["picky"]
    assert (stored.mean, stored.n, stored.errors) == (1.0, 5, 1)


def test_raise_mode_stops_at_the_first_target_error(client: Client, examples: list[dict]) -> None:
    with pytest.raises(RowFailedError, match="the target failed on example .*model timed out"):
        client.evaluate(
            flaky_target,
            data=examples,
            evaluators=[correct],
            error_handling="raise",
            max_concurrency=1,
            experiment="strict",
        )
    [record] = client.list_experiments()
    assert record.status == "failed"
    # Rows finished before the failure are kept, and the experiment can be resumed.
    assert len(client.store.completed_keys(record.id)) == 3


def test_raise_mode_stops_at_the_first_evaluator_error(client: Client, examples: list[dict]) -> None:
    async def target(inputs: dict) -> dict:
        return {"y": 2 * inputs["x"]}

    with pytest.raises(RowFailedError, match="evaluator 'picky' failed .*cannot judge six"):
        client.evaluate(target, data=examples, evaluators=[picky], error_handling="raise")


def test_invalid_arguments_name_the_parameter(client: Client, examples: list[dict]) -> None:
    with pytest.raises(ValueError, match="num_repetitions"):
        client.evaluate(flaky_target, data=examples, num_repetitions=0)
    with pytest.raises(ValueError, match="error_handling"):
        client.evaluate(flaky_target, data=examples, error_handling="skip")
    with pytest.raises(ValueError, match="resume=True needs experiment="):
        client.evaluate(flaky_target, data=examples, resume=True)
    with pytest.raises(ValueError, match="max_concurrency"):
        client.evaluate(flaky_target, data=examples, max_concurrency=-2)
    with pytest.raises(TypeError, match="is not callable"):
        client.evaluate(42, data=examples)
    assert client.list_experiments() == []
