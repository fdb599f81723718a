"""A real HTTP server on loopback that speaks Anthropic's Messages API (``POST
/v1/messages``), plain and streamed, so the official ``anthropic`` client runs offline::

    with FakeAnthropicServer(handler=lambda request: "hello") as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key="unused")
        client.messages.create(model="m", max_tokens=10, messages=[...])

``handler`` gets the request body and returns the reply: a text, or a list of content
blocks (``{"type": "text", ...}``, ``{"type": "tool_use", ...}``); without one the server
echoes the last user message. A handler that raises answers Anthropic's error body with
status 500. Usage counts words (input: the messages and system prompt; output: the
reply). Every request body is kept in ``requests``.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Callable
from typing import Any

from assay.testing._http_server import HTTPRequest, HTTPResponse, LoopbackDouble

__all__ = ["FakeAnthropicServer"]

Reply = str | list[dict[str, Any]]
Handler = Callable[[dict[str, Any]], Reply]


class FakeAnthropicServer(LoopbackDouble):
    """An Anthropic Messages API server on 127.0.0.1."""

    API = "fake Anthropic"

    def __init__(self, handler: Handler | None = None, *, model: str = "claude-fake", port: int = 0) -> None:
        self.handler = handler or _echo
        self.model = model
        self.requests: list[dict[str, Any]] = []
        super().__init__(port)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """What ``anthropic.Anthropic(base_url=...)`` takes (the client adds ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    async def _respond(self, http: HTTPRequest) -> HTTPResponse:
        if http.method != "POST" or http.path.split("?")[0].rstrip("/") != "/v1/messages":
            return HTTPResponse(404, _error("not_found_error", f"no route {http.method} {http.path}"))
        try:
            body = json.loads(http.body or b"{}")
        except ValueError:
            return HTTPResponse(400, _error("invalid_request_error", "the body is not JSON"))
        with self._lock:
            self.requests.append(body)
            number = next(self._ids)
        try:
            reply = self.handler(body)
        except Exception as exc:  # noqa: BLE001 - the handler's failure is the server's 500
            return HTTPResponse(500, _error("api_error", f"{type(exc).__name__}: {exc}"))
        message = self._message(body, reply, number)
        if body.get("stream"):
            return HTTPResponse(200, _events(message), content_type="text/event-stream")
        return HTTPResponse(200, json.dumps(message).encode())

    def _message(self, request: dict[str, Any], reply: Reply, number: int) -> dict[str, Any]:
        blocks = [{"type": "text", "text": reply}] if isinstance(reply, str) else list(reply)
        uses_tools = any(block.get("type") == "tool_use" for block in blocks)
        return {
            "id": f"msg_fake_{number}",
            "type": "message",
            "role": "assistant",
            "model": request.get("model") or self.model,
            "content": blocks,
            "stop_reason": "tool_use" if uses_tools else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": _words(request), "output_tokens": _words(blocks)},
        }


def _echo(request: dict[str, Any]) -> str:
    users = [m for m in request.get("messages") or [] if m.get("role") == "user"]
    return _text(users[-1].get("content")) if users else ""


def _events(message: dict[str, Any]) -> bytes:
    """The server-sent events that stream ``message``: text a word at a time, a tool's
    input as JSON in two parts, usage in ``message_start`` and ``message_delta``."""
    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(message["content"]):
        events += _block_events(index, block)
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": message["usage"]["output_tokens"]},
        }
    )
    events.append({"type": "message_stop"})
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _block_events(index: int, block: dict[str, Any]) -> list[dict[str, Any]]:
    if block.get("type") == "tool_use":
        arguments = json.dumps(block.get("input") or {})
        half = len(arguments) // 2
        deltas = [
            {"type": "input_json_delta", "partial_json": part}
            for part in (arguments[:half], arguments[half:])
        ]
        opened = {**block, "input": {}}
    else:
        words = re.findall(r"\S+\s*|\s+", block.get("text") or "")
        deltas = [{"type": "text_delta", "text": word} for word in words]
        opened = {"type": "text", "text": ""}
    return [
        {"type": "content_block_start", "index": index, "content_block": opened},
        *({"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas),
        {"type": "content_block_stop", "index": index},
    ]


def _words(value: Any) -> int:
    return len(_text(value).split())


def _text(value: Any) -> str:
    """The text in a message body, content or block list (nested), joined by spaces."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " ".join(_text(item) for item in value)
    if isinstance(value, dict):
        parts = [value.get(k) for k in ("system", "messages", "content", "text") if k in value]
        return " ".join(_text(part) for part in parts)
    return ""


def _error(kind: str, message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()
