"""``evaluate`` as LangSmith code calls it: positional order, upload_results=False,
blocking=False with streaming and wait(), aevaluate's async iteration, to_pandas."""

from __future__ import annotations

import asyncio
import threading
import uuid
from typing import Any

import pytest

from assay import AsyncExperimentResults, Client, ExperimentResults, aevaluate, evaluate
from assay.evaluation import RowFailedError

DATA = [{"inputs": {"x": i}, "outputs": {"y": 2 * i}} for i in range(5)]


def double(inputs: dict) -> dict:
    return {"y": 2 * inputs["x"]}


def exact(outputs: dict, reference_outputs: dict) -> bool:
    return outputs == reference_outputs


def test_positional_arguments_bind_as_in_langsmith(client: Client) -> None:
    # evaluate(target, data, evaluators, summary_evaluators, metadata, experiment_prefix,
    #          description, max_concurrency, num_repetitions, client, blocking, experiment)
    results = evaluate(
        double, DATA, [exact], None, {"model": "m1"}, "pre", "a description", 2, 2, client, True, "named"
    )
    record = client.store.get_experiment(name="named")
    assert record is not None and record.metadata == {"model": "m1"}
    assert results.get_dataset_id() == str(record.dataset_id) and results.url is None
    assert record.description == "a description" and record.num_repetitions == 2
    assert len(results) == 10


def test_metadata_must_be_a_dict(client: Client) -> None:
    with pytest.raises(TypeError, match="metadata= takes a dict"):
        evaluate(double, DATA, [exact], None, "pre", client=client)  # type: ignore[arg-type]


def test_upload_results_false_keeps_everything_in_memory(client: Client) -> None:
    client.create_dataset("stored")
    client.create_examples(examples=DATA, dataset_name="stored")
    before = client.store.list_datasets()
    for data in (DATA, "stored"):
        results = evaluate(double, data=data, evaluators=[exact], client=client, upload_results=False)
        assert [r["evaluation_results"]["results"][0].score for r in results] == [True] * 5
        assert results.aggregate["exact"].mean == 1.0
    assert client.store.list_experiments() == []
    assert [d.name for d in client.store.list_datasets()] == [d.name for d in before]


def test_upload_runs_is_an_alias_and_both_at_once_is_refused(client: Client) -> None:
    evaluate(double, data=DATA, client=client, upload_runs=False)
    assert client.store.list_experiments() == []
    with pytest.raises(ValueError, match="not both"):
        evaluate(double, data=DATA, client=client, upload_results=False, upload_runs=False)
    with pytest.raises(TypeError, match="upload_results= takes True"):
        evaluate(double, data=DATA, client=client, upload_results="no")  # type: ignore[arg-type]


def test_blocking_false_streams_rows_before_the_experiment_ends(client: Client) -> None:
    gate = threading.Event()

    def held(inputs: dict) -> dict:
        if inputs["x"] > 0:
            assert gate.wait(10)
        return double(inputs)

    results = evaluate(
        held,
        data=DATA,
        evaluators=[exact],
        client=client,
        blocking=False,
        max_concurrency=1,
        experiment="streamed",
    )
    assert isinstance(results, ExperimentResults) and not results.done
    rows = iter(results)
    first = next(rows)  # arrives while the other rows are still held
    assert first["example"].inputs == {"x": 0} and not results.done and len(results) == 1
    assert results.experiment_id == client.store.get_experiment(name="streamed").id
    gate.set()
    rest = list(rows)
    results.wait()
    assert len(rest) == 4 and results.done and len(results) == 5
    assert client.store.get_experiment(name="streamed").status == "completed"
    assert [r.example.inputs["x"] for r in results.rows] == [0, 1, 2, 3, 4]


def test_blocking_false_reports_a_failure_from_wait(client: Client) -> None:
    results = evaluate(
        double,
        data=DATA,
        client=client,
        blocking=False,
        error_handling="raise",
        evaluators=[lambda outputs: 1 / 0],
    )
    with pytest.raises(Exception, match="division by zero"):
        results.wait()


async def test_aevaluate_results_iterate_asynchronously(client: Client) -> None:
    release = asyncio.Event()

    async def slow(inputs: dict) -> dict:
        if inputs["x"] > 0:
            await release.wait()
        return double(inputs)

    results = await aevaluate(slow, data=DATA, evaluators=[exact], client=client, blocking=False)
    assert isinstance(results, AsyncExperimentResults)
    with pytest.raises(RuntimeError, match="await results.wait"):
        results.aggregate  # noqa: B018 - still running
    seen: list[Any] = []
    async for row in results:
        seen.append(row["example"].inputs["x"])
        if len(seen) == 1:
            assert seen == [0]
            release.set()
    assert sorted(seen) == [0, 1, 2, 3, 4]
    await results.wait()
    assert results.aggregate["exact"].mean == 1.0


async def test_blocking_aevaluate_is_done_when_it_returns(client: Client) -> None:
    results = await aevaluate(double, data=DATA, evaluators=[exact], client=client, num_repetitions=2)
    assert results.done and len(results) == 10
    assert [row async for row in results][0]["run"].outputs == {"y": 0}


def test_to_pandas_has_langsmiths_columns_and_slices(client: Client) -> None:
    def fails_on_3(inputs: dict) -> dict:
        if inputs["x"] == 3:
            raise ValueError("three")
        return double(inputs)

    def label(outputs: dict) -> str:
        return "even"

    results = evaluate(fails_on_3, data=DATA, evaluators=[exact, label], client=client)
    frame = results.to_pandas()
    assert list(frame.columns) == [
        "inputs.x",
        "outputs.y",
        "error",
        "reference.y",
        "feedback.exact",
        "feedback.label",
        "execution_time",
        "example_id",
        "id",
    ]
    labels = frame["feedback.label"].tolist()  # a value when there is no score
    assert labels[:3] + labels[4:] == ["even"] * 4 and frame["feedback.label"].isna()[3]  # skipped
    assert frame["error"].notna().tolist() == [False, False, False, True, False]
    assert isinstance(frame["id"][0], uuid.UUID) and frame["id"][0] == results.rows[0].run.id
    middle = results.to_pandas(start=1, end=3)
    assert middle["inputs.x"].tolist() == [1, 2]


def test_integer_scores_stay_integers(client: Client) -> None:
    def count(outputs: dict) -> int:
        return outputs["y"]

    def as_dict(outputs: dict) -> dict:
        return {"key": "d", "score": 3}

    results = evaluate(double, data=DATA, evaluators=[count, as_dict], client=client)
    scores = [r.score for row in results for r in row["evaluation_results"]["results"]]
    assert scores == [0, 3, 2, 3, 4, 3, 6, 3, 8, 3] and all(type(s) is int for s in scores)
    assert results.to_pandas()["feedback.count"].dtype.kind == "i"


def test_experiment_accepts_a_project_record(client: Client) -> None:
    project = client.create_project("from-a-project-name-only")
    results = evaluate(double, data=DATA, client=client, experiment=project.name + "-run")
    assert results.experiment_name == "from-a-project-name-only-run"


def test_a_string_target_names_an_experiment_to_rescore(client: Client) -> None:
    with pytest.raises(NotImplementedError, match="assay rescore"):
        evaluate("some-experiment", evaluators=[exact], client=client)


def fails_at_2(inputs: dict) -> dict:
    if inputs["x"] == 2:
        raise ValueError("two")
    return double(inputs)


def test_streaming_iteration_delivers_finished_rows_then_raises(client: Client) -> None:
    results = evaluate(
        fails_at_2, data=DATA, client=client, blocking=False, max_concurrency=1, error_handling="raise"
    )
    seen = []
    with pytest.raises(RowFailedError, match="two"):
        for row in results:
            seen.append(row["example"].inputs["x"])
    assert seen[:2] == [0, 1] and 2 in seen
    # The same once the failure is known: the finished rows, then the error.
    with pytest.raises(RowFailedError):
        results.wait()
    again = []
    with pytest.raises(RowFailedError):
        for row in results:
            again.append(row["example"].inputs["x"])
    assert again == seen and len(results) == len(seen)


async def test_async_iteration_delivers_finished_rows_then_raises(client: Client) -> None:
    results = await aevaluate(
        fails_at_2, data=DATA, client=client, blocking=False, max_concurrency=1, error_handling="raise"
    )
    seen = []
    with pytest.raises(RowFailedError, match="two"):
        async for row in results:
            seen.append(row["example"].inputs["x"])
    assert seen[:2] == [0, 1]
    with pytest.raises(RowFailedError):
        await results.wait()


async def test_a_finished_background_experiment_replays_its_rows_in_data_order(client: Client) -> None:
    results = await aevaluate(
        double, data=DATA, client=client, blocking=False, evaluators=[exact], num_repetitions=1
    )
    await results.wait()
    assert len(results) == 5 and [r async for r in results][-1]["run"].outputs == {"y": 8}


async def test_sync_evaluate_in_the_background_from_inside_a_running_loop(client: Client) -> None:
    async def atarget(inputs: dict) -> dict:
        await asyncio.sleep(0.001)
        return double(inputs)

    async def aexact(outputs: dict, reference_outputs: dict) -> bool:
        return outputs == reference_outputs

    results = evaluate(
        atarget, data=DATA, evaluators=[aexact], client=client, blocking=False, num_repetitions=2
    )
    results.wait()  # the experiment ran on its own loop, in its own thread
    assert len(results) == 10 and results.aggregate["aexact"].mean == 1.0
