"""The Client calls LangSmith users make on feedback and projects, on both stores:
``read_feedback``/``update_feedback``/``delete_feedback``, ``update_project`` and
``delete_project``."""

from __future__ import annotations

import pytest

from assay import Client, evaluate
from assay.store import NotFoundError

DATA = [{"inputs": {"x": i}, "outputs": {"y": 2 * i}} for i in range(3)]


def _experiment(client: Client, name: str = "exp") -> list:
    evaluate(
        lambda inputs: {"y": 2 * inputs["x"]},
        data=DATA,
        evaluators=[lambda outputs: 1],
        client=client,
        experiment=name,
    )
    return list(client.list_runs(project_name=name, is_root=True))


def test_feedback_is_read_updated_and_deleted_by_id(any_client: Client) -> None:
    client = any_client
    run = _experiment(client)[0]
    created = client.create_feedback(run.id, "helpful", score=1, comment="good")
    assert client.read_feedback(created.id).comment == "good"

    client.update_feedback(created.id, score=0.5, correction={"y": 3})
    updated = client.read_feedback(str(created.id))
    assert (updated.score, updated.comment, updated.correction) == (0.5, "good", {"y": 3})
    assert [f.score for f in client.list_feedback(run_ids=[run.id], feedback_key=["helpful"])] == [0.5]

    client.delete_feedback(created.id)
    with pytest.raises(NotFoundError, match=str(created.id)):
        client.read_feedback(created.id)
    assert list(client.list_feedback(run_ids=[run.id], feedback_key=["helpful"])) == []
    with pytest.raises(NotFoundError):
        client.delete_feedback(created.id)


def test_an_evaluator_result_reads_as_feedback_but_is_changed_by_rescoring(any_client: Client) -> None:
    client = any_client
    run = _experiment(client)[0]
    [result] = client.list_feedback(run_ids=[run.id], feedback_source_type=["evaluator"])
    assert client.read_feedback(result.id).score == 1
    with pytest.raises(ValueError, match="evaluator's result"):
        client.update_feedback(result.id, score=0)
    with pytest.raises(ValueError, match="re-score"):
        client.delete_feedback(result.id)


def test_update_project_renames_and_replaces_metadata(any_client: Client) -> None:
    client = any_client
    _experiment(client, "old")
    project = client.read_project(project_name="old")
    updated = client.update_project(
        project.id, name="new", description="d", metadata={"m": 1}, project_extra={"e": 2}
    )
    assert (updated.name, updated.description) == ("new", "d")
    assert client.read_project(project_name="new").metadata == {"m": 1, "project_extra": {"e": 2}}
    assert not client.has_project("old")
    _experiment(client, "other")
    with pytest.raises(ValueError, match="already exists"):
        client.update_project(project.id, name="other")


def test_delete_project_removes_runs_and_results(any_client: Client) -> None:
    client = any_client
    runs = _experiment(client, "gone")
    client.delete_project(project_name="gone")
    assert not client.has_project("gone")
    with pytest.raises(NotFoundError):
        client.read_run(runs[0].id)


def test_get_experiment_results_gives_stats_and_each_example_with_its_runs(client: Client) -> None:
    def half_right(outputs: dict, reference_outputs: dict) -> bool:
        return outputs["y"] == reference_outputs["y"] and outputs["y"] > 0

    evaluate(
        lambda inputs: {"y": 2 * inputs["x"]},
        data=DATA,
        evaluators=[half_right],
        client=client,
        experiment="stats",
        num_repetitions=2,
    )
    project = client.read_project(project_name="stats")
    for found in (
        client.get_experiment_results(name="stats"),
        client.get_experiment_results(project_id=project.id),
    ):
        assert found["feedback_stats"]["half_right"]["n"] == 6
        assert found["feedback_stats"]["half_right"]["avg"] == 4 / 6
        assert found["run_stats"]["run_count"] == 6 and found["run_stats"]["latency_p50"] is not None
        examples = list(found["examples_with_runs"])
        assert sorted(e.inputs["x"] for e in examples) == [0, 1, 2]
        for example in examples:
            assert [run.outputs for run in example.runs] == [{"y": 2 * example.inputs["x"]}] * 2
            assert {run.reference_example_id for run in example.runs} == {example.id}
    assert len(list(client.get_experiment_results(name="stats", limit=2)["examples_with_runs"])) == 2
    with pytest.raises(NotFoundError):
        client.get_experiment_results(name="missing")


def test_client_evaluate_run_scores_a_stored_run_and_keeps_the_feedback(client: Client) -> None:
    run = _experiment(client)[1]

    def exact(run, example):  # type: ignore[no-untyped-def]
        return {"key": "exact", "score": run.outputs == example.outputs, "comment": "checked"}

    result = client.evaluate_run(str(run.id), exact, source_info={"by": "test"})
    assert (result.key, result.score) == ("exact", True)
    [stored] = client.list_feedback(run_ids=[run.id], feedback_key=["exact"])
    assert (stored.score, stored.comment) == (True, "checked")
    assert stored.feedback_source == {"type": "model", "metadata": {"by": "test"}}

    def broken(run, example):  # type: ignore[no-untyped-def]
        raise RuntimeError("judge down")

    failed = client.evaluate_run(run, broken)
    assert failed.error is not None and "judge down" in failed.error
    [kept] = client.list_feedback(run_ids=[run.id], feedback_key=["broken"])
    assert kept.score is None and "judge down" in (kept.comment or "")


def test_dataset_version_tags_name_versions_list_examples_reads(any_client: Client) -> None:
    client = any_client
    client.create_dataset("tagged")
    first = client.create_examples(examples=DATA[:2], dataset_name="tagged")
    client.update_dataset_tag(dataset_name="tagged", as_of=first["as_of"], tag="v1")
    client.create_examples(examples=DATA[2:], dataset_name="tagged")
    client.update_dataset_tag(dataset_name="tagged", as_of="latest", tag="prod")

    def xs(as_of: object) -> list[int]:
        return [e.inputs["x"] for e in client.list_examples(dataset_name="tagged", as_of=as_of)]

    assert xs("v1") == [0, 1]
    assert xs("prod") == xs("latest") == xs(None) == [0, 1, 2]
    client.update_dataset_tag(dataset_name="tagged", as_of="v1", tag="prod")  # moving a tag
    assert xs("prod") == [0, 1]
    with pytest.raises(ValueError, match="no version tagged 'beta'.*tags: prod, v1"):
        xs("beta")
    with pytest.raises(TypeError, match="version number"):
        xs(1.5)
