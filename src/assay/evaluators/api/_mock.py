"""A mock HTTP server for one example, made from its OpenAPI document.

It listens on a Unix socket (the sandbox reaches it through a relay on its own loopback;
see ``_in_sandbox``), validates each request against the document (path, method, query
and path parameters, JSON body), answers from fixtures or the document's examples,
injects the faults the example asks for, and records every request and response.
"""

from __future__ import annotations

import hashlib
import json
import os
import socketserver
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from assay.evaluators.api._fixtures import Fixture, best_fixture, query_matches
from assay.evaluators.api._openapi import API, Operation

MAX_BODY = 1024 * 1024
MAX_RECORDED = 500
SHOWN_BODY = 2000
KEPT_BODY_BYTES = 64 * 1024  # a body up to this size is kept parsed, for the expected-call checks
KEPT_TOTAL_BYTES = 4 * 1024 * 1024  # all kept bodies of one example together
MAX_HEADERS = 32  # recorded per request
HEADER_CHARS = 256
BODIES_AT_ONCE = 4  # requests whose body is read, parsed and validated at the same time


@dataclass(frozen=True)
class Fault:
    """``times`` first matching calls get ``status`` (with ``headers``), or, for
    ``timeout``, an answer only after ``delay`` seconds."""

    match: str  # "GET /users/{id}" or "/users/{id}" (any method)
    kind: str  # "status" or "timeout"
    status: int = 500
    times: int = 1
    delay: float = 5.0
    headers: dict[str, str] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)  # only calls with these query values

    def applies(self, operation: Operation, call: dict[str, Any]) -> bool:
        method, _, template = self.match.rpartition(" ")
        if template != operation.template or (method and method != operation.method):
            return False
        return query_matches(self.query, call)


@dataclass
class Recorder:
    """The calls in arrival order. Bodies are kept parsed up to ``KEPT_BODY_BYTES`` each
    and ``KEPT_TOTAL_BYTES`` in all; past that a call keeps only the body's size and
    sha256 (``body_bytes``, ``body_sha256``, both always recorded), so what a program
    sends costs the parent bounded memory."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    started: float = field(default_factory=time.monotonic)
    kept_bytes: int = 0

    def keep_body(self, call: dict[str, Any]) -> None:
        size = int(call.get("body_bytes") or 0)
        with self.lock:
            fits = size <= KEPT_BODY_BYTES and self.kept_bytes + size <= KEPT_TOTAL_BYTES
            if fits:
                self.kept_bytes += size
        if not fits:
            call["body"] = None
            call["body_dropped"] = f"{size} bytes: over the {KEPT_BODY_BYTES}-byte limit kept per body"

    def add(self, call: dict[str, Any]) -> None:
        with self.lock:
            if len(self.calls) < MAX_RECORDED:
                self.calls.append(call)

    def snapshot(self) -> list[dict[str, Any]]:
        with self.lock:
            return [dict(call) for call in self.calls]


class MockAPI:
    def __init__(self, api: API, socket_path: str, faults: list[Fault], fixtures: list[Fixture]) -> None:
        self.api, self.faults, self.fixtures = api, faults, fixtures
        self.fault_counts = [0] * len(faults)
        self.recorder = Recorder()
        self.socket_path = socket_path
        self._lock = threading.Lock()
        self.body_slots = threading.BoundedSemaphore(BODIES_AT_ONCE)
        self._server = _Server(socket_path, _handler_for(self))
        os.chmod(socket_path, 0o777)  # the sandbox's unprivileged uid must connect
        self._thread = threading.Thread(
            target=self._server.serve_forever, daemon=True, kwargs={"poll_interval": 0.01}
        )

    def __enter__(self) -> MockAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        try:
            os.unlink(self.socket_path)
        except OSError:
            pass

    def fault_for(self, operation: Operation, call: dict[str, Any]) -> Fault | None:
        with self._lock:
            for index, fault in enumerate(self.faults):
                if fault.applies(operation, call) and self.fault_counts[index] < fault.times:
                    self.fault_counts[index] += 1
                    return fault
        return None


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    block_on_close = False


def _handler_for(mock: MockAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def address_string(self) -> str:
            return "sandbox"

        def handle_one_request(self) -> None:
            try:
                super().handle_one_request()
            except (ConnectionError, TimeoutError):
                self.close_connection = True

        def _serve(self) -> None:
            _serve(mock, self)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _serve

    return Handler


def _serve(mock: MockAPI, handler: BaseHTTPRequestHandler) -> None:
    began = time.monotonic()
    with mock.body_slots:  # a few bodies in memory at once, however many connections
        call = _received(mock, handler, began)
        mock.recorder.add(call)  # now, in arrival order; completed below (a slow answer too)
        refusal = _checked(mock, call)
        mock.recorder.keep_body(call)
    status, payload, headers = refusal or _answer(mock, call)
    data = b"" if payload is None else json.dumps(payload).encode()
    call.update(status=status, response=_shown(payload), fault=headers.pop("x-assay-fault", None))
    retry_after = next((value for name, value in headers.items() if name.lower() == "retry-after"), None)
    if call["fault"] and retry_after is not None:
        call["retry_after"] = retry_after
    call["duration_ms"] = round((time.monotonic() - began) * 1000, 2)
    if call["fault"] == "timeout":
        return  # the delay has passed; the client should have given up
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        if handler.command != "HEAD":
            handler.wfile.write(data)
    except OSError:
        handler.close_connection = True


def _received(mock: MockAPI, handler: BaseHTTPRequestHandler, began: float) -> dict[str, Any]:
    parts = urlsplit(handler.path)
    length = int(handler.headers.get("Content-Length") or 0)
    raw = handler.rfile.read(min(length, MAX_BODY)) if length > 0 else b""
    return {
        "at": round(began - mock.recorder.started, 4),
        "method": handler.command,
        "path": parts.path,
        "query": {k: v if len(v) > 1 else v[0] for k, v in parse_qs(parts.query).items()},
        "headers": _headers(handler),
        "body": _body(raw),
        "body_bytes": len(raw),
        "body_sha256": hashlib.sha256(raw).hexdigest() if raw else None,
    }


Answer = tuple[int, Any, dict[str, str]]


def _checked(mock: MockAPI, call: dict[str, Any]) -> Answer | None:
    """Find the call's operation and validate it (the whole body); a refusal, or None."""
    from assay.evaluators.api._validate import validate_request

    operation, path_params, path_known = mock.api.find(call["method"], call["path"])
    if operation is None:
        call["undeclared"] = True
        status = 405 if path_known else 404
        return status, {"error": "not in the API" if status == 404 else "method not allowed"}, {}
    call["operation"] = operation.label
    if operation.operation_id:
        call["operation_id"] = operation.operation_id
    problems = validate_request(operation, path_params, call)
    if problems:
        call["invalid"] = problems
        return 400, {"error": "invalid request", "problems": problems}, {}
    return None


def _answer(mock: MockAPI, call: dict[str, Any]) -> Answer:
    operation, _, _ = mock.api.find(call["method"], call["path"])
    assert operation is not None  # _checked found it
    fault = mock.fault_for(operation, call)
    if fault is not None and fault.kind == "timeout":
        call["fault"] = "timeout"
        time.sleep(fault.delay)
        return 504, None, {"x-assay-fault": "timeout"}
    if fault is not None:
        return (
            fault.status,
            {"error": f"injected {fault.status}"},
            {**fault.headers, "x-assay-fault": str(fault.status)},
        )
    fixture = best_fixture(mock.fixtures, call, operation.template)
    if fixture is not None:
        return fixture.status, fixture.body, {}
    return operation.status, operation.example, {}


def _headers(handler: BaseHTTPRequestHandler) -> dict[str, str]:
    """The request's headers, lower-cased, a bounded number of bounded values."""
    kept: dict[str, str] = {}
    for name, value in handler.headers.items():
        if len(kept) >= MAX_HEADERS:
            break
        kept.setdefault(name.lower()[:HEADER_CHARS], str(value)[:HEADER_CHARS])
    return kept


def _body(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return {"$text": raw[:SHOWN_BODY].decode(errors="replace")}


def _shown(payload: Any) -> Any:
    text = json.dumps(payload)
    return payload if len(text) <= SHOWN_BODY else text[:SHOWN_BODY] + "..."
