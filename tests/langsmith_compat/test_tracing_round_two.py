"""Tracing as LangSmith records it, beyond the basics: streams (return values, ``send``,
``process_chunk``, ``reduce_fn`` on returned iterators, errors mid-stream, ``new_token``),
``enabled``, ``exceptions_to_handle``, a ``run_tree`` parameter, metadata passed down,
``set_run_metadata``, ``RunTree``'s LangSmith behaviours, and a trace carried across
two processes by ``to_headers``/``from_headers``."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import urllib.request
from collections.abc import Generator, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pydantic
import pytest

from assay.run_helpers import set_run_metadata, trace, traceable, tracing_context
from assay.run_trees import RunTree


def test_a_traced_generator_keeps_its_return_value_and_takes_what_is_sent() -> None:
    @traceable
    def echo() -> Generator[int, int, str]:
        total = 0
        while total < 5:
            total += yield total
        return f"total {total}"

    @traceable
    def outer() -> Generator[int, int, str]:
        returned = yield from echo()
        return returned.upper()

    with trace("root") as root:
        stream = outer()
        assert next(stream) == 0
        assert stream.send(2) == 2
        with pytest.raises(StopIteration) as stop:
            stream.send(3)
    assert stop.value.value == "TOTAL 5"
    [outer_run] = root.child_runs
    [echo_run] = outer_run.child_runs
    assert echo_run.outputs == {"output": [0, 2, "total 5"]}  # items, then the return value
    assert outer_run.outputs == {"output": [0, 2, "TOTAL 5"]}


def test_what_a_generator_yielded_before_raising_is_kept_with_the_error() -> None:
    @traceable(process_chunk=lambda chunk: chunk * 10)
    def fails() -> Iterator[int]:
        yield 1
        yield 2
        raise RuntimeError("broke")

    with trace("root") as root:
        received = []
        with pytest.raises(RuntimeError):
            for item in fails():
                received.append(item)
    [run] = root.child_runs
    assert received == [1, 2]  # the caller gets the raw items
    assert run.outputs == {"output": [10, 20]} and run.error == "RuntimeError: broke"


def test_reduce_fn_wraps_an_iterator_a_function_returns_until_it_is_consumed() -> None:
    @traceable(run_type="llm", reduce_fn=lambda chunks: {"text": "".join(chunks)})
    def stream(prompt: str) -> Iterator[str]:
        return iter(prompt.split())

    with trace("root") as root:
        chunks = stream("a b c")
        [run] = root.child_runs
        assert run.end_time is None  # open while the caller reads
        assert list(chunks) == ["a", "b", "c"]
    assert run.outputs == {"text": "abc"} and run.end_time is not None
    assert [event["name"] for event in run.events] == ["new_token"]
    assert run.events[0]["kwargs"] == {"token": "a"}


def test_enabled_and_exceptions_to_handle() -> None:
    @traceable(enabled=False)
    def never() -> int:
        return 1

    @traceable(enabled=True)
    def always() -> int:
        return 2

    @traceable(exceptions_to_handle=(KeyError,))
    def lookup(key: str) -> int:
        return {"a": 1}[key]

    with trace("root") as root:
        assert never() == 1
        with tracing_context(enabled=False):
            assert always() == 2
        with pytest.raises(KeyError):
            lookup("b")
    assert [run.name for run in root.child_runs] == ["always", "lookup"]
    assert root.child_runs[1].error is None and root.child_runs[1].end_time is not None
    assert never.__traceable_config__["enabled"] is False  # type: ignore[attr-defined]


def test_a_run_tree_parameter_receives_the_run_and_metadata_flows_down(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @traceable
    def child() -> str:
        set_run_metadata(step="child")
        return "done"

    @traceable
    def parent(question: str, run_tree: RunTree) -> str:
        run_tree.add_tags("seen")
        return child()

    with trace("root") as root:
        parent("q", langsmith_extra={"metadata": {"user": "ada"}})
    [parent_run] = root.child_runs
    [child_run] = parent_run.child_runs
    assert parent_run.inputs == {"question": "q"} and "seen" in (parent_run.tags or [])
    assert child_run.metadata == {"user": "ada", "step": "child"}
    with caplog.at_level(logging.WARNING, logger="assay.tracing"):
        set_run_metadata(lost=True)
    assert "No active run tree found" in caplog.text


class Answer(pydantic.BaseModel):
    text: str
    score: float


def test_run_tree_behaves_as_langsmiths() -> None:
    root = RunTree(name="root", client=object(), events=None, inputs=Answer(text="q", score=0))
    assert root.events == [] and root.inputs == {"text": "q", "score": 0}
    assert json.loads(root.json())["name"] == "root"  # the client is not serialized
    root.add_metadata({"thread_id": "t-1"})
    early = root.create_child("early", start_time=root.start_time - timedelta(seconds=5))
    assert early.start_time == root.start_time  # clamped to the parent's
    assert early.metadata["thread_id"] == "t-1"
    early.end(outputs=Answer(text="a", score=1).model_dump())
    assert early.outputs == {"text": "a", "score": 1}


def test_headers_round_trip_and_hostile_headers_name_no_parent() -> None:
    with trace("caller", tags=["web"], metadata={"tenant": "acme"}) as caller:
        headers = caller.to_headers()
    parent = RunTree.from_headers(headers)
    assert parent is not None
    assert (parent.id, parent.trace_id, parent.dotted_order) == (
        caller.id,
        caller.trace_id,
        caller.dotted_order,
    )
    assert parent.metadata == {"tenant": "acme"} and parent.tags == ["web"]
    child = parent.create_child("remote")
    assert child.trace_id == caller.trace_id and child.dotted_order.startswith(caller.dotted_order + ".")
    assert RunTree.from_dotted_order(child.dotted_order).parent_run_id == caller.id
    for hostile in (
        {},
        {"langsmith-trace": "garbage"},
        {"langsmith-trace": caller.dotted_order * 1000},
        {"langsmith-trace": ".".join([caller.dotted_order] * 500)},
    ):
        assert RunTree.from_headers(hostile) is None
    deep = {"langsmith-trace": caller.dotted_order, "baggage": "langsmith-metadata=" + "[" * 10_000}
    assert RunTree.from_headers(deep).metadata == {}  # type: ignore[union-attr]


SERVICE = """
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from assay.run_helpers import traceable, tracing_context

@traceable
def answer(question):
    return question[::-1]

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        question = self.rfile.read(int(self.headers["Content-Length"])).decode()
        runs = []
        with tracing_context(parent=dict(self.headers)):
            answer(question, langsmith_extra={"on_end": runs.append})
        run = runs[0]
        body = json.dumps({key: str(getattr(run, key)) for key in
                           ("trace_id", "parent_run_id", "dotted_order")} | {"metadata": run.metadata}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

server = HTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.handle_request()
"""


@pytest.mark.slow
def test_a_trace_crosses_an_http_call_between_two_processes(tmp_path: Path) -> None:
    script = tmp_path / "service.py"
    script.write_text(SERVICE, encoding="utf-8")
    with subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True) as service:
        assert service.stdout is not None
        port = int(service.stdout.readline())
        with trace("client", metadata={"session": "s-9"}) as caller:
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/", data=b"hello", headers=caller.to_headers(), method="POST"
            )
            with urllib.request.urlopen(request, timeout=60) as response:
                remote: dict[str, Any] = json.loads(response.read())
        service.wait(timeout=60)
    assert remote["trace_id"] == str(caller.trace_id)
    assert remote["parent_run_id"] == str(caller.id)
    assert remote["dotted_order"].startswith(f"{caller.dotted_order}.")
    assert remote["metadata"] == {"session": "s-9"}
