"""What the fake OpenAI server answers, and what it records of each request."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ChatHandler", "EmbeddingHandler", "RecordedRequest", "Reply", "ReplyLike"]


@dataclass(frozen=True)
class Reply:
    """One answer of the fake server.

    ``content`` is the assistant message (a dict or list is sent as JSON text). ``status``,
    ``headers`` and ``delay`` shape the HTTP reply; ``body`` replaces the whole body (for
    malformed replies); ``usage`` overrides the token counts (by default, words are counted).
    """

    content: str | dict[str, Any] | list[Any] | None = None
    status: int = 200
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    usage: dict[str, int] | None = None

    @classmethod
    def rate_limited(cls, retry_after: float | None = None) -> Reply:
        headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
        return cls(status=429, headers=headers, body=_error_body("Rate limit reached", "rate_limit"))

    @classmethod
    def server_error(cls, status: int = 500) -> Reply:
        return cls(status=status, body=_error_body("The server had an error", "server_error"))

    @classmethod
    def malformed_body(cls, body: bytes = b'{"choices": [') -> Reply:
        """An HTTP 200 whose body is not a chat completion (a truncated proxy reply)."""
        return cls(status=200, body=body)

    @classmethod
    def slow(cls, seconds: float, content: str | dict[str, Any] | None = None) -> Reply:
        return cls(content=content, delay=seconds)

    def text(self) -> str:
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return json.dumps(self.content, ensure_ascii=False)


def _error_body(message: str, kind: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": kind}}).encode()


@dataclass(frozen=True)
class RecordedRequest:
    """A request the fake server received. The Authorization header is kept only as a flag."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def is_chat(self) -> bool:
        return self.path.rstrip("/").endswith("/chat/completions")

    @property
    def messages(self) -> list[dict[str, Any]]:
        if isinstance(self.body, dict):
            return list(self.body.get("messages") or [])
        return []

    @property
    def text(self) -> str:
        """Every message's content, joined: what the model was shown."""
        return "\n".join(str(message.get("content", "")) for message in self.messages)

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def response_format(self) -> dict[str, Any] | None:
        return self.body.get("response_format") if isinstance(self.body, dict) else None

    @property
    def schema_name(self) -> str | None:
        """The name of the requested JSON schema, when ``response_format`` carried one."""
        spec = (self.response_format or {}).get("json_schema") or {}
        return spec.get("name")

    @property
    def schema(self) -> dict[str, Any] | None:
        spec = (self.response_format or {}).get("json_schema") or {}
        return spec.get("schema")


ReplyLike = str | dict[str, Any] | Reply
#: a handler computes the reply from the request: text, a JSON-able dict, or a full Reply
#: (an async handler may return an awaitable of one)
ChatHandler = Callable[[RecordedRequest], ReplyLike | Awaitable[ReplyLike]]
EmbeddingHandler = Callable[[list[str]], list[list[float]]]
