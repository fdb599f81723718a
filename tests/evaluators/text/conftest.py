"""Fixtures of the text evaluator tests: a fresh in-memory store per test (the embeddings
cache lives there; the environment is cleaned by the root conftest), and helpers to
build runs and examples."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from assay.schemas import Example, Run
from assay.store import Store


@pytest.fixture(autouse=True)
def store(memory_store: Store) -> Store:
    """The embeddings cache of each test lives in its own in-memory store."""
    return memory_store


def _run_of(output: Any = None, **outputs: Any) -> Run:
    """A run whose outputs are ``{"output": output}`` (or the keywords given)."""
    return Run(outputs=outputs or {"output": output})


def _example_of(reference: Any = None, **outputs: Any) -> Example:
    """An example whose reference outputs are ``{"output": reference}`` (or the keywords)."""
    return Example(inputs={"question": "q"}, outputs=outputs or {"output": reference})


MakeRun = Callable[..., Run]
MakeExample = Callable[..., Example]


@pytest.fixture
def run_of() -> MakeRun:
    return _run_of


@pytest.fixture
def example_of() -> MakeExample:
    return _example_of


class ScriptedServer:
    """A loopback HTTP server answering POSTs from a script of (status, body, headers).

    ``assay.testing.FakeOpenAIServer`` answers ``/embeddings`` through a callable only; the
    failure paths (429 with Retry-After, 401, 500, malformed bodies) need scripted replies.
    """

    def __init__(self) -> None:
        self.replies: list[tuple[int, bytes, dict[str, str]]] = []
        self.requests: list[dict[str, Any]] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def reply(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.replies.append((status, raw, headers or {}))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                server.requests.append(
                    {
                        "path": self.path,
                        "headers": dict(self.headers.items()),
                        "body": json.loads(self.rfile.read(length) or b"null"),
                    }
                )
                status, body, headers = (
                    server.replies.pop(0)
                    if server.replies
                    else (500, b'{"error": {"message": "no reply scripted"}}', {})
                )
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server
