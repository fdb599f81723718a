"""A real HTTP server on loopback that speaks the OpenAI Chat Completions protocol.

Tests of judge pipelines, ours and users', run against it with no network and no key::

    with FakeOpenAIServer(handler=lambda request: {"reasoning": "ok", "value": "Y"}) as server:
        judge = CriteriaEvaluator("conciseness", model=server.chat_model())
        ...
        assert "conciseness" in server.chat_requests[0].text

Replies come from a script (consumed in order) and then from ``handler``; with no handler,
every request gets a valid instance of its JSON schema (``schema_reply.valid_reply``), so
any judge runs offline with ``FakeOpenAIServer()`` alone. 429s, 500s,
delays and malformed bodies are ``Reply`` values in either. ``/v1/embeddings`` answers
through ``embeddings``. Every request is recorded.

``dialect`` plays a server that enforces a JSON schema by grammar-constrained decoding:
``"openai"`` (``response_format``), ``"vllm"`` (also ``guided_json`` and
``structured_outputs``), ``"ollama"`` (also ``format``) or ``"llamacpp"`` (also
``json_schema``); its replies are then schema-valid whatever the handler says.
``strict_fields`` rejects the schema fields of other dialects, as a strict server would.
``concurrency_limit=20`` answers 429 with ``Retry-After: retry_after`` to a chat request
arriving while 20 are in flight, as a rate-limited provider does; ``rejected`` counts them.
``bias=Bias(position=0.3, verbosity=0.2)`` bends that share of pairwise verdicts to the
first answer shown or to the longer one, as biased judges do.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Iterable
from typing import Any

from assay.llm.model import ChatModel
from assay.llm.retry import RetryPolicy
from assay.testing._bias import Bias
from assay.testing._chat_stream import streamed
from assay.testing._dialects import DIALECTS, constrain, enforced_schema, foreign_field
from assay.testing._http_server import HTTPRequest, HTTPResponse, LoopbackDouble
from assay.testing.replies import ChatHandler, EmbeddingHandler, RecordedRequest, Reply
from assay.testing.schema_reply import valid_reply

__all__ = ["FakeOpenAIServer", "REJECTION", "STATS_PATH", "Scripted"]


Scripted = str | dict[str, Any] | Reply

STATS_PATH = "/_assay/stats"
REJECTION = "response_format of type json_schema is not supported by this server"


class FakeOpenAIServer(LoopbackDouble):
    """An OpenAI-compatible server on 127.0.0.1 with scripted or computed replies."""

    API = "fake OpenAI"

    def __init__(
        self,
        replies: Iterable[Scripted] = (),
        *,
        handler: ChatHandler | None = None,
        embeddings: EmbeddingHandler | None = None,
        latency: float = 0.0,
        reject_response_format: bool = False,
        dialect: str | None = None,
        strict_fields: bool = False,
        bias: Bias | None = None,
        concurrency_limit: int | None = None,
        retry_after: float = 0.05,
        model: str = "fake-judge",
        port: int = 0,
    ) -> None:
        if dialect is not None and dialect not in DIALECTS:
            raise ValueError(f"dialect must be one of {', '.join(DIALECTS)} or None, got {dialect!r}")
        self.handler = handler
        self.embeddings = embeddings
        self.latency = latency
        self.reject_response_format = reject_response_format
        self.dialect = dialect
        self.strict_fields = strict_fields
        self.bias = bias
        self.concurrency_limit = concurrency_limit
        self.retry_after = retry_after
        self.rejected = 0
        self.max_chats_in_flight = 0  # chats answered at once (rejected ones not counted)
        self._chats_in_flight = 0
        self.model = model
        super().__init__(port)
        self.requests: list[RecordedRequest] = []
        self.handler_errors: list[BaseException] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._script: deque[Scripted] = deque(replies)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    # what tests use
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def chat_model(self, **options: Any) -> ChatModel:
        """A ``ChatModel`` pointing here, with retries fast enough for tests."""
        defaults: dict[str, Any] = {
            "model": self.model,
            "base_url": self.base_url,
            "api_key": "sk-fake-test-key",
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

    def stats(self) -> dict[str, int]:
        """Counts for a server run as a process (``GET /_assay/stats``)."""
        with self._lock:
            return {
                "requests": len(self.requests),
                "max_in_flight": self.max_in_flight,
                "rejected": self.rejected,
                "chat_requests": sum(1 for r in self.requests if r.is_chat),
            }

    @property
    def pending_replies(self) -> int:
        with self._lock:
            return len(self._script)

    # request handling (on the server's event loop)
    async def _respond(self, http: HTTPRequest) -> HTTPResponse:
        request = _recorded(http)
        self._record(request)
        try:
            path = http.path.rstrip("/")
            if http.method == "GET" and path.endswith("/models"):
                body = {"object": "list", "data": [{"id": self.model, "object": "model"}]}
                return HTTPResponse(200, json.dumps(body).encode())
            if http.method == "GET" and path == STATS_PATH:  # for a server in another process
                return HTTPResponse(200, json.dumps(self.stats()).encode())
            if http.method == "POST" and path.endswith("/chat/completions"):
                return await self._limited_chat(request)
            if http.method == "POST" and path.endswith("/embeddings"):
                await asyncio.sleep(self.latency)
                return HTTPResponse(*self._embedding_body(request))
            return HTTPResponse(404, _error(f"no route {http.method} {http.path}", "not_found"))
        finally:
            self._done()

    async def _limited_chat(self, request: RecordedRequest) -> HTTPResponse:
        """A chat answer, or a 429 when ``concurrency_limit`` chats are already in flight."""
        with self._lock:
            over = self.concurrency_limit is not None and self._chats_in_flight >= self.concurrency_limit
            if over:
                self.rejected += 1
            else:
                self._chats_in_flight += 1
                self.max_chats_in_flight = max(self.max_chats_in_flight, self._chats_in_flight)
        if over:
            limited = Reply.rate_limited(self.retry_after)
            return HTTPResponse(429, limited.body or b"", tuple(limited.headers.items()))
        try:
            return await self._answer_chat(request)
        finally:
            with self._lock:
                self._chats_in_flight -= 1

    async def _answer_chat(self, request: RecordedRequest) -> HTTPResponse:
        reply = self._enforced(request, await self._chat_reply(request))
        await asyncio.sleep(self.latency + reply.delay)
        if reply.body is not None:
            body = reply.body
        elif reply.status == 200:
            body = self._chat_body(request, reply)
            if isinstance(request.body, dict) and request.body.get("stream"):
                usage = bool((request.body.get("stream_options") or {}).get("include_usage"))
                stream = streamed(json.loads(body), include_usage=usage)
                return HTTPResponse(200, stream, tuple(reply.headers.items()), "text/event-stream")
        else:
            body = _error(reply.text() or f"HTTP {reply.status}", "error")
        return HTTPResponse(reply.status, body, tuple(reply.headers.items()))

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _enforced(self, request: RecordedRequest, reply: Reply) -> Reply:
        """The reply a grammar-constrained decoder would give (schema-valid JSON), with
        the injected bias."""
        if reply.status != 200 or reply.body is not None:
            return reply
        if self.bias is not None:
            reply = dataclasses.replace(reply, content=self.bias.apply(request.text, reply.text()))
        if self.dialect is None:
            return reply
        accepts = not self.reject_response_format
        schema = enforced_schema(request.body, self.dialect, response_format=accepts)
        if schema is None:
            return reply
        return dataclasses.replace(reply, content=constrain(reply.text(), schema))

    async def _chat_reply(self, request: RecordedRequest) -> Reply:
        if self.reject_response_format and request.response_format is not None:
            return Reply(status=400, body=_error(REJECTION, "invalid_request_error"))
        foreign = foreign_field(request.body, self.dialect) if self.strict_fields and self.dialect else None
        if foreign is not None:
            message = f"unrecognized request argument supplied: {foreign}"
            return Reply(status=400, body=_error(message, "invalid_request_error"))
        with self._lock:
            scripted = self._script.popleft() if self._script else None
        if scripted is None:
            handler = self.handler or valid_reply  # by default, a valid answer to any schema
            try:
                computed = handler(request)
                scripted = await computed if inspect.isawaitable(computed) else computed
            except Exception as exc:  # shown to the client as a 500 and kept for the test
                self.handler_errors.append(exc)
                return Reply(status=500, body=_error(f"handler failed: {exc!r}", "server_error"))
        if scripted is None:
            message = "fake OpenAI server: the handler returned None"
            return Reply(status=400, body=_error(message, "invalid_request_error"))
        return scripted if isinstance(scripted, Reply) else Reply(content=scripted)

    def _chat_body(self, request: RecordedRequest, reply: Reply) -> bytes:
        text = reply.text()
        usage = reply.usage or {
            "prompt_tokens": len(request.text.split()),
            "completion_tokens": len(text.split()),
        }
        usage = {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]}
        return json.dumps(
            {
                "id": f"chatcmpl-fake-{next(self._ids)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.model or self.model,
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": text},
                    }
                ],
                "usage": usage,
            },
            ensure_ascii=False,
        ).encode()

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
        return 200, json.dumps(
            {
                "object": "list",
                "data": data,
                "model": request.body.get("model"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        ).encode()


def _error(message: str, kind: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": kind}}).encode()


def _recorded(http: HTTPRequest) -> RecordedRequest:
    try:
        body: Any = json.loads(http.body) if http.body else None
    except ValueError:
        body = http.body.decode("utf-8", "replace")
    headers = dict(http.headers)
    if "authorization" in headers:  # record that a key came, never the key itself
        headers["authorization"] = "Bearer ***"
    return RecordedRequest(method=http.method, path=http.path, headers=headers, body=body)
