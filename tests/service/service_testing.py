"""Real servers for the service tests: the evaluator service under uvicorn on 127.0.0.1 in a
thread, a flaky HTTP server that fails its first N calls, and the evaluators they serve.
Imported by the tests (conftest puts this folder on the path)."""

from __future__ import annotations

import http.server
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn

from assay.schemas import EvaluationResult
from assay.service.app import create_app
from assay.service.registry import named_evaluators
from assay.service.wire import encode_results

TOKEN = "service-token-1234"


def exact(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> bool:
    return outputs.get("answer") == reference_outputs.get("answer")


def lengths(outputs: dict[str, Any], inputs: dict[str, Any]) -> list[dict[str, Any]]:
    """Two metrics with keys of their own, and a value that is not a score."""
    return [
        {"key": "answer_length", "score": len(str(outputs.get("answer", "")))},
        {"key": "echo", "value": outputs.get("answer"), "comment": f"question: {inputs.get('q')}"},
    ]


def broken(outputs: dict[str, Any]) -> float:
    raise ValueError("this evaluator always fails")


async def async_exact(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> dict[str, Any]:
    return {"key": "async_exact", "score": outputs.get("answer") == reference_outputs.get("answer")}


LIGHT = {"exact": exact, "lengths": lengths, "broken": broken, "async_exact": async_exact}


class LiveService:
    """uvicorn serving ``create_app(evaluators)`` on 127.0.0.1 in a thread of this process."""

    def __init__(self, evaluators: dict[str, Any], **settings: Any) -> None:
        self.port = free_port()
        app = create_app(named_evaluators(evaluators, "test"), **settings)
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LiveService:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the evaluator service did not start within 10 s")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


class FlakyServer:
    """A real HTTP server: its first ``failures`` calls get ``fail`` (a status, or "drop" to
    close the connection unanswered, or "slow" to answer after ``delay`` s or when ``release``
    is set, whichever comes first); later calls get a valid reply holding ``result``. Counts
    every call and the time each arrived, and the replies sent (``replied``)."""

    def __init__(
        self,
        failures: int,
        fail: int | str = 503,
        result: EvaluationResult | None = None,
        headers: dict[str, str] | None = None,
        delay: float = 2.0,
    ) -> None:
        self.failures = failures
        self.calls: list[float] = []
        self.replied = 0
        self.release = threading.Event()
        self.lock = threading.Lock()
        reply = encode_results("flaky", [result or EvaluationResult(key="flaky_metric", score=0.75)])
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                with outer.lock:
                    outer.calls.append(time.monotonic())
                    failing = len(outer.calls) <= outer.failures
                if failing and fail == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if failing and fail == "slow":
                    outer.release.wait(delay)
                if failing and isinstance(fail, int):
                    self._send(fail, b'{"detail": "failing on purpose"}', headers or {})
                    return
                self._send(200, reply, {})

            def _send(self, status: int, body: bytes, extra: dict[str, str]) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)
                with outer.lock:
                    outer.replied += 1

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> FlakyServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def without(keys: set[str]) -> Callable[[Any], Any]:
    """A function stripping ``keys`` at any depth (timings that differ between two runs)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in keys}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip
