"""LangSmith's Client calls about projects, runs and feedback, on the local store: an
experiment is a project, its rows' runs (and their traced children) are its runs."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from assay import Client, Feedback, TracerSession, evaluate, traceable
from assay.store import NotFoundError, open_store


@traceable(run_type="tool")
def tool(x: int) -> int:
    if x == 2:
        raise ValueError("two")
    return x


def target(inputs: dict) -> dict:
    try:
        return {"y": tool(inputs["x"])}
    except ValueError:
        raise RuntimeError("target failed") from None


def correct(outputs: dict) -> int:
    return 1


@pytest.fixture
def experiment(client: Client) -> str:
    evaluate(
        target,
        data=[{"x": i} for i in range(4)],
        evaluators=[correct],
        client=client,
        experiment="exp",
        metadata={"model": "m"},
    )
    return "exp"


def test_projects_are_experiments(client: Client, experiment: str) -> None:
    project = client.read_project(project_name=experiment)
    assert isinstance(project, TracerSession) and project.name == "exp"
    assert project.metadata == {"model": "m"} and project.run_count == 4
    assert project.reference_dataset_id == client.store.get_experiment(name="exp").dataset_id
    assert client.read_project(project_id=str(project.id)).name == "exp"
    created = client.create_project("empty", description="by hand")
    assert client.create_project("empty", upsert=True).id == created.id
    with pytest.raises(ValueError, match="already exists"):
        client.create_project("empty")
    assert [p.name for p in client.list_projects()] == ["exp", "empty"]
    assert [p.name for p in client.list_projects(name_contains="mpt")] == ["empty"]
    assert [p.name for p in client.list_projects(reference_dataset_id=project.reference_dataset_id)] == [
        "exp"
    ]
    with pytest.raises(NotFoundError, match="no project"):
        client.read_project(project_name="missing")


def test_list_runs_with_langsmiths_filters(client: Client, experiment: str) -> None:
    everything = list(client.list_runs(project_name=experiment))
    roots = list(client.list_runs(project_name=experiment, is_root=True))
    tools = list(client.list_runs(project_name=experiment, run_type="tool"))
    failed = list(client.list_runs(project_name=experiment, error=True, is_root=True))
    assert len(everything) == 8 and len(roots) == 4 and len(tools) == 4
    assert [r.inputs for r in failed] == [{"x": 2}]
    project_id = client.read_project(project_name=experiment).id
    assert all(r.session_id == project_id for r in everything)
    trace = list(client.list_runs(project_id=project_id, trace_id=failed[0].id))
    assert [r.run_type for r in trace] == ["chain", "tool"] and trace[1].error == "ValueError: two"
    assert len(list(client.list_runs(project_name=experiment, limit=3))) == 3
    with pytest.raises(ValueError, match="project_name= or project_id="):
        list(client.list_runs(run_type="tool"))


def test_read_run_finds_roots_and_children(client: Client, experiment: str) -> None:
    root = next(client.list_runs(project_name=experiment, is_root=True))
    child = next(client.list_runs(project_name=experiment, run_type="tool"))
    assert client.read_run(root.id).child_runs == []
    assert len(client.read_run(str(root.id), load_child_runs=True).child_runs) == 1
    assert client.read_run(child.id).name == "tool"
    with pytest.raises(NotFoundError):
        client.read_run(uuid.uuid4())


def test_feedback_is_stored_and_listed_with_the_evaluators_results(client: Client, experiment: str) -> None:
    run = next(client.list_runs(project_name=experiment, is_root=True))
    made = client.create_feedback(
        run.id,
        "helpful",
        score=1,
        comment="good answer",
        source_info={"user": "ana"},
        feedback_source_type="app",
    )
    assert isinstance(made, Feedback) and made.session_id == run.session_id
    listed = list(client.list_feedback(run_ids=[run.id]))
    # created feedback keeps an integer; evaluator scores come back from the store as floats
    assert [(f.key, f.score, type(f.score)) for f in listed] == [("helpful", 1, int), ("correct", 1.0, float)]
    assert listed[0].comment == "good answer" and listed[0].feedback_source == {
        "type": "app",
        "metadata": {"user": "ana"},
    }
    assert listed[1].feedback_source == {"type": "evaluator"}
    assert [f.key for f in client.list_feedback(run_ids=[run.id], feedback_key=["helpful"])] == ["helpful"]
    assert [f.key for f in client.list_feedback(feedback_source_type=["app"])] == ["helpful"]
    with pytest.raises(ValueError, match="needs run_id"):
        client.create_feedback(key="orphan")
    with pytest.raises(TypeError, match="score= must be a number"):
        client.create_feedback(run.id, "bad", score="high")  # type: ignore[arg-type]


def test_feedback_survives_reopening_the_store(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    client = Client(path)
    evaluate(target, data=[{"x": 1}], client=client, experiment="e")
    run = next(client.list_runs(project_name="e", is_root=True))
    client.create_feedback(run.id, "note", value={"text": "check"}, correction={"y": 9})
    client.close()
    store = open_store(path)
    [note] = [f for f in store.list_feedback([run.id]) if f.key == "note"]
    assert note.value == {"text": "check"} and note.correction == {"y": 9}
    store.close()


def test_upload_csv_and_dataframe_make_datasets(client: Client, tmp_path: Path) -> None:
    import pandas as pd

    path = tmp_path / "qa.csv"
    path.write_text("question,answer,notes\nhi,hello,x\nbye,goodbye,y\n")
    dataset = client.upload_csv(path, input_keys=["question"], output_keys=["answer"])
    assert dataset.name == "qa" and dataset.example_count == 2
    examples = client.list_examples(dataset_name="qa")
    assert [(e.inputs, e.outputs) for e in examples] == [
        ({"question": "hi"}, {"answer": "hello"}),
        ({"question": "bye"}, {"answer": "goodbye"}),
    ]
    with pytest.raises(ValueError, match=r"qa.csv: no column\(s\) \['missing'\]"):
        client.upload_csv(path, input_keys=["missing"], output_keys=[], name="other")
    frame = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
    uploaded = client.upload_dataframe(frame, "frame", input_keys=["a"], output_keys=["b"])
    assert [(e.inputs, e.outputs) for e in client.list_examples(dataset_id=uploaded.id)] == [
        ({"a": 1}, {"b": 3}),
        ({"a": 2}, {"b": 4}),
    ]
    assert all(type(e.inputs["a"]) is int for e in client.list_examples(dataset_id=uploaded.id))


def test_get_test_results(client: Client, experiment: str) -> None:
    frame = client.get_test_results(project_name=experiment)
    assert len(frame) == 4 and frame.index.name == "example_id"
    assert {"input.x", "outputs.y", "execution_time", "error", "id", "feedback.correct"} <= set(frame.columns)
    # the failed target's row is skipped by an evaluator that reads its outputs
    assert frame["feedback.correct"].isna().tolist() == [False, False, True, False]
    assert frame["feedback.correct"].sum() == 3.0 and frame["error"].notna().sum() == 1
