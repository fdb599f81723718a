"""A real HTTP server on loopback that speaks the OpenAI Chat Completions protocol.

Tests of judge pipelines, ours and users', run against it with no network and no key::

    with FakeOpenAIServer(handler=lambda request: {"reasoning": "ok", "value": "Y"}) as server:
        judge = CriteriaEvaluator("conciseness", model=server.chat_model())
        ...
        assert "conciseness" in server.chat_requests[0].text

Replies come from a script (consumed in order) and then from ``handler``; 429s, 500s,
delays and malformed bodies are ``Reply`` values in either. ``/v1/embeddings`` answers
through ``embeddings``. Every request is recorded.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Optional, Union

from assay.llm.model import ChatModel
from assay.llm.retry import RetryPolicy
from assay.testing.replies import ChatHandler, EmbeddingHandler, RecordedRequest, Reply

Scripted = Union[str, dict[str, Any], Reply]

REJECTION = "response_format of type json_schema is not supported by this server"


class FakeOpenAIServer:
    """An OpenAI-compatible server on 127.0.0.1 with scripted or computed replies."""

    def __init__(
        self,
        replies: Iterable[Scripted] = (),
        *,
        handler: Optional[ChatHandler] = None,
        embeddings: Optional[EmbeddingHandler] = None,
        latency: float = 0.0,
        reject_response_format: bool = False,
        model: str = "fake-judge",
    ) -> None:
        self.handler = handler
        self.embeddings = embeddings
        self.latency = latency
        self.reject_response_format = reject_response_format
        self.model = model
        self.requests: list[RecordedRequest] = []
        self.handler_errors: list[BaseException] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._script: deque[Scripted] = deque(replies)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd: Optional[_Server] = None
        self._thread: Optional[threading.Thread] = None

    # lifecycle
    def start(self) -> FakeOpenAIServer:
        if self._httpd is not None:
            return self
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.fake = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
            name="assay-fake-openai", daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.stop()

    # what tests use
    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the fake OpenAI server is not running; call start() first")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def chat_model(self, **options: Any) -> ChatModel:
        """A ``ChatModel`` pointing here, with retries fast enough for tests."""
        defaults: dict[str, Any] = {
            "model": self.model, "base_url": self.base_url, "api_key": "sk-fake-test-key",
            "retry": RetryPolicy(max_attempts=4, initial_delay=0.01, max_delay=0.5),
            "timeout": 10.0,
        }
        return ChatModel(**{**defaults, **options})

    def script(self, *replies: Scripted) -> None:
        """Queue replies, answered in order before ``handler`` is asked."""
        with self._lock:
            self._script.extend(replies)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [request for request in self.requests if request.is_chat]

    @property
    def pending_replies(self) -> int:
        with self._lock:
            return len(self._script)

    # request handling (server threads)
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _chat_reply(self, request: RecordedRequest) -> Reply:
        if self.reject_response_format and request.response_format is not None:
            return Reply(status=400, body=_error(REJECTION, "invalid_request_error"))
        with self._lock:
            scripted = self._script.popleft() if self._script else None
        if scripted is None and self.handler is not None:
            try:
                scripted = self.handler(request)
            except Exception as exc:  # shown to the client as a 500 and kept for the test
                self.handler_errors.append(exc)
                return Reply(status=500, body=_error(f"handler failed: {exc!r}", "server_error"))
        if scripted is None:
            message = "fake OpenAI server: no reply scripted and no handler set"
            return Reply(status=400, body=_error(message, "invalid_request_error"))
        return scripted if isinstance(scripted, Reply) else Reply(content=scripted)

    def _chat_body(self, request: RecordedRequest, reply: Reply) -> bytes:
        text = reply.text()
        usage = reply.usage or {
            "prompt_tokens": len(request.text.split()),
            "completion_tokens": len(text.split()),
        }
        usage = {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]}
        return json.dumps({
            "id": f"chatcmpl-fake-{next(self._ids)}", "object": "chat.completion",
            "created": int(time.time()), "model": request.model or self.model,
            "choices": [{
                "index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": text},
            }],
            "usage": usage,
        }, ensure_ascii=False).encode()

    def _embedding_body(self, request: RecordedRequest) -> tuple[int, bytes]:
        if self.embeddings is None:
            return 404, _error("this fake server has no embeddings handler", "not_found")
        raw = request.body.get("input") if isinstance(request.body, dict) else None
        texts = [raw] if isinstance(raw, str) else list(raw or [])
        vectors = self.embeddings([str(text) for text in texts])
        data = [
            {"object": "embedding", "index": index, "embedding": list(vector)}
            for index, vector in enumerate(vectors)
        ]
        tokens = sum(len(str(text).split()) for text in texts)
        return 200, json.dumps({
            "object": "list", "data": data, "model": request.body.get("model"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }).encode()


def _error(message: str, kind: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": kind}}).encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256
    fake: FakeOpenAIServer

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Close kept-alive connections, so no handler thread outlives the server."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        fake = self.server.fake
        if self.path.rstrip("/").endswith("/models"):
            body = {"object": "list", "data": [{"id": fake.model, "object": "model"}]}
            self._send(200, json.dumps(body).encode())
        else:
            self._send(404, _error(f"no route GET {self.path}", "not_found"))

    def do_POST(self) -> None:
        fake = self.server.fake
        request = self._read_request()
        fake._record(request)
        try:
            path = self.path.rstrip("/")
            if path.endswith("/chat/completions"):
                self._answer_chat(fake, request)
            elif path.endswith("/embeddings"):
                time.sleep(fake.latency)
                self._send(*fake._embedding_body(request))
            else:
                self._send(404, _error(f"no route POST {self.path}", "not_found"))
        finally:
            fake._done()

    def _read_request(self) -> RecordedRequest:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {key.lower(): value for key, value in self.headers.items()}
        if "authorization" in headers:  # record that a key came, never the key itself
            headers["authorization"] = "Bearer ***"
        return RecordedRequest(method="POST", path=self.path, headers=headers, body=body)

    def _answer_chat(self, fake: FakeOpenAIServer, request: RecordedRequest) -> None:
        reply = fake._chat_reply(request)
        time.sleep(fake.latency + reply.delay)
        if reply.body is not None:
            body = reply.body
        elif reply.status == 200:
            body = fake._chat_body(request, reply)
        else:
            body = _error(reply.text() or f"HTTP {reply.status}", "error")
        self._send(reply.status, body, reply.headers)

    def _send(self, status: int, body: bytes, headers: Optional[dict[str, str]] = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            pass
