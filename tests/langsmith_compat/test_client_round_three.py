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
