"""With tracing on, a trace that ends outside an experiment is stored, as LangSmith sends it.

Tracing is on with ``LANGSMITH_TRACING=true`` (or its other spellings),
``tracing_context(enabled=True)`` or ``@traceable(enabled=True)``; the trace goes to the
``client=`` given, else to the default store, in the project named (else
``LANGSMITH_PROJECT``, else "default"). Read back the way a user would: ``Client.list_runs``
and ``read_run``.
"""

from __future__ import annotations

import contextvars
import json
import logging
import math
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay import Client, evaluate, evaluate_existing, trace, traceable, tracing_context
from assay.schemas import Attachment


@traceable(run_type="retriever")
def retrieve(query: str) -> list[str]:
    return [f"doc about {query}"]


@traceable(name="generate", run_type="llm")
def answer(query: str, docs: list[str]) -> str:
    return f"{query}: {docs[0]}"


@traceable
def pipeline(question: str) -> dict:
    return {"answer": answer(question, retrieve(question))}


@pytest.fixture
def default_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Client]:
    """The default store (``ASSAY_DATABASE_URL``) and a client reading it."""
    monkeypatch.setenv("ASSAY_DATABASE_URL", str(tmp_path / "default.db"))
    reader = Client(str(tmp_path / "default.db"))
    yield reader
    reader.close()


def roots(client: Client, project: str) -> list:
    return [run for run in client.list_runs(project_name=project) if run.parent_run_id is None]


def test_langsmith_tracing_env_stores_each_trace_in_the_default_store_under_its_project(
    default_store: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("LANGSMITH_PROJECT", "my-app")
    assert pipeline("tides") == {"answer": "tides: doc about tides"}
    assert pipeline("waves") == {"answer": "waves: doc about waves"}

    stored = roots(default_store, "my-app")
    assert sorted(run.inputs["question"] for run in stored) == ["tides", "waves"]
    tree = default_store.read_run(stored[0].id, load_child_runs=True)
    assert [child.name for child in tree.child_runs] == ["retrieve", "generate"]
    assert tree.outputs == {"answer": f"{tree.inputs['question']}: doc about {tree.inputs['question']}"}
    assert {child.trace_id for child in tree.child_runs} == {tree.id}
    assert all(child.parent_run_id == tree.id and child.end_time for child in tree.child_runs)


@pytest.mark.parametrize("spelling", ["LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING_V2", "ASSAY_TRACING"])
def test_every_spelling_of_the_switch_turns_tracing_on(
    spelling: str, default_store: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(spelling, "TRUE")
    pipeline("q")
    assert len(roots(default_store, "default")) == 1


def test_with_tracing_off_nothing_is_stored_and_no_store_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    pipeline("q")
    with tracing_context(enabled="local"):  # LangSmith's in-memory-only tracing
        pipeline("q")
    assert not (tmp_path / ".assay").exists()


def test_tracing_context_stores_in_its_client_and_project(store_url: str) -> None:
    client = Client(store_url)
    try:
        with tracing_context(enabled=True, client=client, project_name="support-bot"):
            pipeline("refund")
            pipeline("refund")  # the project exists now: found, not made twice
        stored = roots(client, "support-bot")
        assert [run.inputs for run in stored] == [{"question": "refund"}] * 2
        assert len(list(client.list_runs(project_name="support-bot"))) == 6
        assert [p.name for p in client.list_projects()] == ["support-bot"]
    finally:
        client.close()


def test_a_functions_own_enabled_and_client_store_its_traces(client: Client) -> None:
    @traceable(enabled=True, client=client, project_name="tools")
    def lookup(key: str) -> str:
        return key.upper()

    assert lookup("k") == "K"
    (root,) = roots(client, "tools")
    assert root.outputs == {"output": "K"}


def test_a_trace_block_stores_its_tree_when_tracing_is_on(client: Client) -> None:
    with tracing_context(enabled=True, client=client):
        with trace("outer", inputs={"x": 1}) as outer:
            pipeline("nested")
            outer.end(outputs={"done": True})
    (root,) = roots(client, "default")
    tree = client.read_run(root.id, load_child_runs=True)
    assert root.outputs == {"done": True}
    assert [child.name for child in tree.child_runs] == ["pipeline"]
    assert len(list(client.list_runs(project_name="default"))) == 4


def test_inside_an_experiment_traced_calls_stay_in_the_rows_runs(
    client: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The target's traced calls are its row's run's children; an evaluator's (sync, async,
    summary, or in a rescore) are kept in memory: none becomes a trace of its own."""
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("ASSAY_DATABASE_URL", str(tmp_path / "default.db"))  # where a trace would go

    def judged(outputs: dict) -> bool:
        return "answer" in pipeline(outputs["answer"])

    async def judged_async(outputs: dict) -> bool:
        return "answer" in pipeline(outputs["answer"])

    def overall(outputs: list) -> float:
        return float(len(pipeline("all")["answer"]) > 0)

    results = evaluate(
        lambda inputs: pipeline(inputs["q"]),
        data=[{"inputs": {"q": "a"}, "outputs": {}}, {"inputs": {"q": "b"}, "outputs": {}}],
        evaluators=[judged, judged_async],
        summary_evaluators=[overall],
        client=client,
        progress=False,
    )
    rows = list(results)
    assert [child.name for child in rows[0]["run"].child_runs] == ["pipeline"]
    assert all(r.score is True for row in rows for r in row["evaluation_results"]["results"])
    evaluate_existing(
        results.experiment_name, evaluators=[judged], client=client, progress=False, replace=True
    )
    assert [e.name for e in client.store.list_experiments()] == [results.experiment_name]
    assert not (tmp_path / "default.db").exists()


def test_the_clients_hiding_options_apply_to_stored_traces(tmp_path: Path) -> None:
    private = Client(
        str(tmp_path / "private.db"),
        hide_inputs=True,
        anonymizer=lambda values: {key: "<redacted>" for key in values},
    )
    try:
        with tracing_context(enabled=True, client=private):
            pipeline("my card is 4111-1111")
        runs = list(private.list_runs(project_name="default"))
        assert len(runs) == 3
        assert all(run.inputs == {} for run in runs)
        assert all("4111" not in str(run.outputs) for run in runs)
    finally:
        private.close()


def test_a_trace_that_cannot_be_stored_is_a_warning_and_the_call_still_returns(
    client: Client, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An attachment given as a path is read only with ``dangerously_allow_filesystem``:
    without it the trace is refused, said on the log, and the function's caller is not
    disturbed."""
    secret = tmp_path / "secret.txt"
    secret.write_text("host file")

    @traceable
    def summarize(doc: Attachment) -> str:
        return "summary"

    @traceable(dangerously_allow_filesystem=True)
    def summarize_file(doc: Attachment) -> str:
        return "summary"

    with caplog.at_level(logging.WARNING, logger="assay.tracing"):
        with tracing_context(enabled=True, client=client):
            assert summarize(Attachment("text/plain", secret)) == "summary"
    (record,) = [r for r in caplog.records if "was not stored" in r.getMessage()]
    assert "'summarize'" in record.getMessage() and "'doc' names a file" in record.getMessage()
    assert client.store.get_experiment(name="default") is None

    with tracing_context(enabled=True, client=client):
        summarize_file(Attachment("text/plain", secret))
    (root,) = roots(client, "default")
    assert root.name == "summarize_file" and "doc" in (root.attachments or {})


def test_a_streamed_root_is_stored_once_its_stream_ends(client: Client) -> None:
    @traceable
    def tokens(n: int) -> Iterator[str]:
        yield from (f"t{i}" for i in range(n))

    with tracing_context(enabled=True, client=client):
        stream = tokens(3)
        assert next(stream) == "t0"
        assert client.store.get_experiment(name="default") is None
        assert list(stream) == ["t1", "t2"]
    (root,) = roots(client, "default")
    assert root.outputs == {"output": ["t0", "t1", "t2"]}


def test_values_json_cannot_hold_are_stored_and_read_back(client: Client) -> None:
    class Opaque:
        def __repr__(self) -> str:
            return "<opaque>"

    @traceable
    def odd(x: object) -> dict:
        return {"object": Opaque(), "surrogate": "\ud800", "nan": math.nan, "huge": 10**40}

    with tracing_context(enabled=True, client=client):
        odd(Opaque())
    (root,) = roots(client, "default")
    assert root.inputs == {"x": "<opaque>"}
    assert root.outputs is not None and root.outputs["object"] == "<opaque>"
    assert root.outputs["huge"] == 10**40
    assert "surrogate" in root.outputs and "nan" in root.outputs


def test_a_trace_deeper_than_the_recursion_limit_is_stored_in_one_piece(client: Client) -> None:
    depth = 1_100  # each run's dotted order holds its ancestors': the trace's size grows as depth**2
    with trace("root", client=client) as root:
        node = root
        for level in range(depth):
            node = node.create_child(name=f"level-{level}")
        deepest = node
        for _ in range(depth):
            node.end()
            node = node.parent_run
    stored = client.read_run(deepest.id)
    assert stored.trace_id == root.id and stored.name == f"level-{depth - 1}"
    counted = client.store.conn.execute(
        "SELECT count(*), count(DISTINCT trace_id) FROM traced_runs"
    ).fetchone()
    assert tuple(counted) == (depth + 1, 1)


def test_traces_ending_in_many_threads_at_once_are_all_stored(
    default_store: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    start = threading.Barrier(8)

    def worker(i: int) -> None:
        start.wait()
        pipeline(f"q{i}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(run.inputs["question"] for run in roots(default_store, "default")) == [
        f"q{i}" for i in range(8)
    ]
    assert len(list(default_store.list_runs(project_name="default"))) == 24


BACKEND = """
import json, sys
from assay import traceable, tracing_context

@traceable(run_type="llm")
def generate(prompt):
    return prompt.upper()

@traceable
def handle(prompt):
    return generate(prompt)

with tracing_context(parent=json.loads(sys.argv[1])):
    print(handle("hi"))
"""


def test_a_distributed_trace_is_whole_when_both_processes_store_into_one_store(
    default_store: Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backend (another process) continues the frontend's trace from its headers: each
    stores its own runs, and the store holds the one tree."""
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    script = tmp_path / "backend.py"
    script.write_text(BACKEND)
    with trace("frontend", inputs={"prompt": "hi"}) as frontend:
        done = subprocess.run(
            [sys.executable, str(script), json.dumps(frontend.to_headers())],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        frontend.end(outputs={"text": done.stdout.strip()})
    tree = default_store.read_run(frontend.id, load_child_runs=True)
    assert tree.outputs == {"text": "HI"}
    (handled,) = tree.child_runs
    assert handled.name == "handle" and handled.trace_id == frontend.id
    assert [run.name for run in handled.child_runs] == ["generate"]
    assert len(list(default_store.list_runs(project_name="default"))) == 3


def test_a_traced_hiding_function_is_not_traced_again_while_a_trace_is_stored(tmp_path: Path) -> None:
    """Storing calls the client's hiding function; traced itself, its own call is kept in
    memory, or each store would start another, without end."""

    @traceable
    def scrub(values: dict) -> dict:
        return {key: "<hidden>" for key in values}

    private = Client(str(tmp_path / "scrubbed.db"), hide_inputs=scrub)
    returned: list[dict] = []
    try:
        with tracing_context(enabled=True, client=private):
            context = contextvars.copy_context()  # the thread runs inside the tracing context
            worker = threading.Thread(target=context.run, args=(lambda: returned.append(pipeline("secret")),))
            worker.start()
            worker.join(timeout=120)  # a ceiling for the old code's endless storing
        assert returned == [{"answer": "secret: doc about secret"}]
        runs = list(private.list_runs(project_name="default"))
        assert sorted(run.name for run in runs) == ["generate", "pipeline", "retrieve"]
        assert all(set(run.inputs.values()) == {"<hidden>"} for run in runs)
    finally:
        private.close()


def test_a_client_that_is_not_assays_leaves_traces_to_the_default_store(
    default_store: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Code migrated from LangSmith may still pass LangSmith's client: its traces go to the
    default store rather than nowhere."""

    class LangSmithClient:  # what LangSmith's Client offers tracing, for this purpose
        def create_run(self, **_: object) -> None:
            raise AssertionError("assay stores the trace itself")

    monkeypatch.setenv("LANGSMITH_TRACING", "true")

    @traceable(client=LangSmithClient())
    def lookup(key: str) -> str:
        return key.upper()

    assert lookup("k") == "K"
    (root,) = roots(default_store, "default")
    assert root.name == "lookup"
