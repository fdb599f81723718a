"""``Client.create_run`` / ``update_run``: runs with no example, in a tracing project, on
both stores; read back with ``read_run`` / ``list_runs``, scored with ``create_feedback``."""

from __future__ import annotations

import sqlite3
import sys
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from assay import Client
from assay.store import NotFoundError
from assay.store._schema import MIGRATIONS, SCHEMA_VERSION

set_back = sys.modules["assay_tests_schema_history"].set_back  # tests/_schema_history.py

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def _trace(client: Client, project: str = "tracing") -> tuple[uuid.UUID, uuid.UUID, uuid.UUID]:
    """A root with two children, posted child-first as a tracer may, then patched."""
    root, first, second = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    client.create_run("app", {"question": "hi"}, "chain", id=root, project_name=project, start_time=T0)
    client.create_run(
        "retrieve", {"q": "hi"}, "retriever", id=second, parent_run_id=root, trace_id=root,
        project_name=project, start_time=T0 + timedelta(seconds=2),
    )  # fmt: skip
    client.create_run(
        "llm", {"prompt": "hi"}, "llm", id=first, parent_run_id=root, project_name=project,
        start_time=T0 + timedelta(seconds=1),
    )  # fmt: skip
    client.update_run(first, outputs={"text": "hello"}, end_time=T0 + timedelta(seconds=1.5))
    client.update_run(second, error="ValueError: no index", end_time=T0 + timedelta(seconds=3))
    client.update_run(root, outputs={"answer": "hello"}, end_time=T0 + timedelta(seconds=4))
    return root, first, second


def test_a_posted_and_patched_trace_reads_back_as_a_tree(any_client: Client) -> None:
    client = any_client
    root, first, second = _trace(client)
    tree = client.read_run(root, load_child_runs=True)
    assert (tree.name, tree.inputs, tree.outputs) == ("app", {"question": "hi"}, {"answer": "hello"})
    assert tree.end_time == T0 + timedelta(seconds=4) and tree.latency_ms == 4000.0
    assert [c.id for c in tree.child_runs] == [first, second]  # in start order, not post order
    assert tree.child_runs[0].outputs == {"text": "hello"}
    assert tree.child_runs[1].error == "ValueError: no index"
    assert {c.trace_id for c in tree.child_runs} == {root}  # a child's trace is its parent's
    alone = client.read_run(first)
    assert alone.parent_run_id == root and alone.child_runs == [] and alone.run_type == "llm"
    assert client.read_run(root).child_runs == []  # without load_child_runs


def test_list_runs_filters_a_tracing_project(any_client: Client) -> None:
    client = any_client
    root, first, second = _trace(client)
    project = client.read_project(project_name="tracing")
    assert project.reference_dataset_id is None
    runs = list(client.list_runs(project_name="tracing"))
    assert [r.id for r in runs] == [root, first, second]
    assert {r.session_id for r in runs} == {project.id}
    assert [r.id for r in client.list_runs(project_id=project.id, is_root=True)] == [root]
    assert [r.id for r in client.list_runs(project_name="tracing", run_type="llm")] == [first]
    assert [r.id for r in client.list_runs(project_name="tracing", error=True)] == [second]
    assert [r.id for r in client.list_runs(project_name="tracing", parent_run_id=root)] == [first, second]
    assert [r.id for r in client.list_runs(trace_id=root)] == [root, first, second]
    assert [r.id for r in client.list_runs(project_name="tracing", run_ids=[second], limit=5)] == [second]


def test_the_project_defaults_to_langsmith_project_then_default(
    any_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = any_client
    monkeypatch.delenv("LANGCHAIN_PROJECT", raising=False)
    monkeypatch.setenv("LANGSMITH_PROJECT", "from-env")
    client.create_run("a", {}, "chain")
    monkeypatch.delenv("LANGSMITH_PROJECT")
    client.create_run("b", {}, "chain")
    project = client.read_project(project_name="default")
    client.create_run("c", {}, "chain", session_id=project.id)
    assert [r.name for r in client.list_runs(project_name="from-env")] == ["a"]
    assert [r.name for r in client.list_runs(project_name="default")] == ["b", "c"]


def test_inputs_are_copied_when_posted_and_odd_values_kept_as_text(any_client: Client) -> None:
    client = any_client
    inputs = {"messages": ["hi"], "gen": (i for i in range(3))}
    run_id = uuid.uuid4()
    client.create_run("r", inputs, "llm", id=run_id)
    inputs["messages"].append("there")  # the caller's list changes after the post
    stored = client.read_run(run_id).inputs
    assert stored["messages"] == ["hi"]
    assert stored["gen"].startswith("<generator object")


def test_hide_inputs_and_outputs_apply_before_anything_is_stored(store_url: str) -> None:
    client = Client(
        store_url,
        hide_inputs=lambda inputs: {"hi there": "woah"},
        hide_outputs=lambda outputs: {k: v + "goodbye" for k, v in outputs.items()},
    )
    run_id = uuid.uuid4()
    client.create_run("r", {"secret": "key-123"}, "llm", id=run_id)
    client.update_run(run_id, outputs={"out": "a"}, inputs={"secret": "again"})
    run = client.read_run(run_id)
    assert (run.inputs, run.outputs) == ({"hi there": "woah"}, {"out": "agoodbye"})
    client.close()
    hidden = Client(store_url, hide_inputs=True, hide_outputs=True)
    other = uuid.uuid4()
    hidden.create_run("r", {"secret": "key-123"}, "llm", id=other, outputs={"x": 1})
    assert (hidden.read_run(other).inputs, hidden.read_run(other).outputs) == ({}, {})
    hidden.close()


def test_update_run_merges_metadata_and_keeps_what_is_left_out(any_client: Client) -> None:
    client = any_client
    run_id = uuid.uuid4()
    client.create_run(
        "r", {"x": 1}, "tool", id=run_id, extra={"metadata": {"a": 1}}, tags=["t"], revision_id="v2"
    )
    client.update_run(run_id, extra={"metadata": {"b": 2}}, status="completed", api_key="ignored")
    run = client.read_run(run_id)
    assert run.metadata == {"a": 1, "revision_id": "v2", "b": 2}
    assert (run.tags, run.inputs, run.name, run.run_type) == (["t"], {"x": 1}, "r", "tool")


def test_a_run_posted_twice_keeps_the_first(any_client: Client) -> None:
    client = any_client
    run_id = uuid.uuid4()
    client.create_run("first", {"n": 1}, "chain", id=run_id)
    client.create_run("second", {"n": 2}, "chain", id=run_id)  # LangSmith's 409, passed over
    assert client.read_run(run_id).name == "first"
    assert len(list(client.list_runs(project_name="default"))) == 1


def test_bad_calls_say_what_is_wrong(any_client: Client) -> None:
    client = any_client
    missing = uuid.uuid4()
    with pytest.raises(NotFoundError, match=f"{missing}.*create_run"):
        client.update_run(missing, outputs={"x": 1})
    with pytest.raises(TypeError, match="outptus"):
        client.create_run("r", {}, "chain", outptus={"x": 1})
    with pytest.raises(ValueError, match="parent_run_id='nope' is not a UUID"):
        client.create_run("r", {}, "chain", parent_run_id="nope")
    with pytest.raises(TypeError, match="inputs= must be a dict"):
        client.create_run("r", ["not", "a", "dict"], "chain")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="dangerously_allow_filesystem"):
        client.create_run("r", {}, "chain", attachments={"f": ["text/plain", "/etc/passwd"]})


def test_inline_attachments_are_kept_and_files_read_only_when_allowed(
    any_client: Client, tmp_path: Path
) -> None:
    client = any_client
    run_id, other = uuid.uuid4(), uuid.uuid4()
    client.create_run("r", {}, "chain", id=run_id, attachments={"note": ("text/plain", b"data")})
    assert client.read_run(run_id).attachments == {"note": ("text/plain", b"data")}
    path = tmp_path / "a.txt"
    path.write_bytes(b"from disk")
    client.create_run(
        "r", {}, "chain", id=other, attachments={"f": ("text/plain", path)}, dangerously_allow_filesystem=True
    )
    assert client.read_run(other).attachments == {"f": ("text/plain", b"from disk")}


def test_feedback_on_a_traced_run_knows_its_project_and_trace(any_client: Client) -> None:
    client = any_client
    root, first, _ = _trace(client)
    feedback = client.create_feedback(first, "helpful", score=1)
    assert feedback.session_id == client.read_project(project_name="tracing").id
    assert feedback.trace_id == root
    assert [f.key for f in client.list_feedback(run_ids=[first])] == ["helpful"]


def test_deleting_the_project_deletes_its_runs(any_client: Client) -> None:
    client = any_client
    root, _, _ = _trace(client)
    client.delete_project(project_name="tracing")
    with pytest.raises(NotFoundError):
        client.read_run(root)
    assert list(client.list_runs(trace_id=root)) == []


def test_a_store_of_the_previous_schema_gets_the_table(tmp_path: Path) -> None:
    url = str(tmp_path / "old.db")
    Client(url).close()
    before = next(i for i, script in enumerate(MIGRATIONS) if "CREATE TABLE traced_runs" in script)
    with sqlite3.connect(url) as conn:  # as the schema before traced runs left it
        set_back(conn, before)
    client = Client(url)
    run_id = uuid.uuid4()
    client.create_run("r", {"x": 1}, "chain", id=run_id)
    assert client.read_run(run_id).inputs == {"x": 1}
    client.close()
    with sqlite3.connect(url) as conn:
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    assert version == str(SCHEMA_VERSION)


def test_a_run_tree_with_a_client_is_stored_by_post_and_patch(any_client: Client) -> None:
    """LangSmith's manual tracing: ``RunTree(client=...)``, ``post()`` when it starts,
    ``end()`` and ``patch()`` when it ends; children made by ``create_child`` share the client."""
    from assay.run_trees import RunTree

    client = any_client
    root = RunTree(
        name="pipeline", run_type="chain", inputs={"q": "hi"}, client=client, session_name="manual"
    )
    root.post()
    child = root.create_child("llm", "llm", inputs={"prompt": "hi"})
    child.post()
    child.end(outputs={"text": "hello"})
    child.patch()
    root.end(outputs={"answer": "hello"}, metadata={"v": 2})
    root.patch()
    late = root.create_child("never-posted", "tool", inputs={"x": 1})
    late.end(outputs={"y": 2})
    late.patch()  # a patch with no post stores the run whole, as LangSmith's server does
    tree = client.read_run(root.id, load_child_runs=True)
    assert (tree.outputs, tree.metadata, tree.end_time is not None) == ({"answer": "hello"}, {"v": 2}, True)
    assert [(c.name, c.outputs) for c in tree.child_runs] == [
        ("llm", {"text": "hello"}),
        ("never-posted", {"y": 2}),
    ]
    assert {r.session_id for r in client.list_runs(project_name="manual")} == {
        client.read_project(project_name="manual").id
    }
    whole = RunTree(name="batch", inputs={}, client=client, session_name="manual")
    whole.create_child("step", "tool").end(outputs={"ok": True})
    whole.end(outputs={})
    whole.post(exclude_child_runs=False)
    assert [c.name for c in client.read_run(whole.id, load_child_runs=True).child_runs] == ["step"]
    RunTree(name="in-memory").post()  # no client: nothing to store, nothing raised


def test_trace_with_a_client_stores_its_tree_when_it_ends(any_client: Client) -> None:
    from assay.run_helpers import trace, traceable

    client = any_client

    @traceable(run_type="tool")
    def lookup(city: str) -> str:
        return f"sunny in {city}"

    with trace("app", inputs={"q": "weather"}, client=client, project_name="traced") as root:
        lookup("Paris")
        root.end(outputs={"answer": "sunny"})
    with pytest.raises(ValueError), trace("failing", client=client, project_name="traced"):
        raise ValueError("boom")
    stored = client.read_run(root.id, load_child_runs=True)
    assert stored.outputs == {"answer": "sunny"}
    assert [(c.name, c.run_type, c.outputs) for c in stored.child_runs] == [
        ("lookup", "tool", {"output": "sunny in Paris"})
    ]
    [failed] = [r for r in client.list_runs(project_name="traced", is_root=True) if r.name == "failing"]
    assert failed.error == "ValueError: boom"
    with trace("untraced-store"):  # no client: kept in memory only
        pass
    assert {r.name for r in client.list_runs(project_name="traced")} == {"app", "lookup", "failing"}


def test_a_projects_runs_are_read_a_page_at_a_time(
    any_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages of two: runs sharing a start time (ties by id) and later ones, each once, in order."""
    from assay.store.sqlite import _traced

    monkeypatch.setattr(_traced, "TRACED_PAGE", 2)
    client = any_client
    ids = sorted(uuid.uuid4() for _ in range(5))
    for run_id in ids:
        client.create_run("tie", {}, "chain", id=run_id, project_name="paged", start_time=T0)
    later = uuid.uuid4()
    client.create_run(
        "later", {}, "chain", id=later, project_name="paged", start_time=T0 + timedelta(seconds=1)
    )
    assert [r.id for r in client.list_runs(project_name="paged")] == [*ids, later]
    assert [r.id for r in client.list_runs(project_name="paged", limit=3)] == ids[:3]
