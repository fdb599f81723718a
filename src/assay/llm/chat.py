"""The chat-client interface: one request in, one reply out.

``OpenAICompatibleClient`` implements it over HTTP; anything else (a provider SDK, a local
model in-process) can subclass ``ChatClient`` and be passed wherever a model is accepted.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any

from assay.llm.usage import Price, Usage

__all__ = ["ChatClient", "ChatReply", "ChatRequest", "Message", "ResponseSchema"]


Message = dict[str, Any]  # {"role": "system" | "user" | "assistant", "content": str}


@dataclass(frozen=True)
class ResponseSchema:
    """A JSON schema the reply must follow; ``name`` is what servers show in logs."""

    name: str
    schema: dict[str, Any]


@dataclass(frozen=True)
class ChatRequest:
    messages: list[Message]
    response_schema: ResponseSchema | None = None


@dataclass(frozen=True)
class ChatReply:
    content: str
    usage: Usage = field(default_factory=Usage)
    # "json_schema" when the server enforced the schema, "prompt" when it was only asked to
    structured_mode: str | None = None


class ChatClient(abc.ABC):
    """A chat model. ``complete`` retries transient failures itself and raises ``LLMError``."""

    #: whether calls may be answered from (and written to) the store's cache
    cache_enabled: bool = True
    price: Price | None = None

    @abc.abstractmethod
    async def complete(self, request: ChatRequest) -> ChatReply: ...

    @abc.abstractmethod
    def cache_identity(self) -> dict[str, Any]:
        """What, besides the request, decides the reply: model name and sampling parameters.

        It is part of every cache key, so it must never include secrets or the server address.
        """

    @property
    @abc.abstractmethod
    def model_name(self) -> str: ...

    def secrets(self) -> tuple[str, ...]:
        """What must never be kept from a call (an API key): scrubbed from stored transcripts."""
        return ()
