"""The OpenAI-compatible chat client (OpenAI, vLLM, Ollama, llama.cpp server, LiteLLM proxy)."""

from __future__ import annotations

import json
from typing import Any

from assay.errors import ModelCallError, ModelReplyError
from assay.llm import _io_loop
from assay.llm._http import Endpoint, HTTPStatusFailure, post_json
from assay.llm._limits import model_limiter
from assay.llm._structured_fields import FALLBACK, schema_fields
from assay.llm.chat import ChatClient, ChatReply, ChatRequest, Message, ResponseSchema
from assay.llm.model import ChatModel, safe_url
from assay.llm.prices import price_for
from assay.llm.usage import Price, Usage

__all__ = ["JSON_IN_PROMPT_INSTRUCTION", "OpenAICompatibleClient", "with_json_instruction"]


#: Added to the system prompt when the server cannot enforce a JSON schema itself.
JSON_IN_PROMPT_INSTRUCTION = (
    "Reply with a single JSON object and nothing else: no prose, no code fences. "
    "It must match this JSON schema:\n{schema}"
)

# what a server's error says when it rejects the fields of a rung (and not the prompt)
_REJECTION_WORDS = {
    "json_schema": ("response_format", "json_schema", "schema"),
    "grammar": ("guided_json", "format", "json_schema", "schema", "unrecognized", "extra", "unknown"),
}

# (base_url, model) -> the rung of the "auto" ladder its server accepted last
_RUNG: dict[tuple[str, str], str] = {}


class OpenAICompatibleClient(ChatClient):
    """Chat Completions over HTTP, with retries, a shared concurrency limit and a fallback."""

    def __init__(self, model: ChatModel) -> None:
        self.config = model
        self.base_url = model.base_url.rstrip("/")

    @property
    def model_name(self) -> str:
        return self.config.model

    @property
    def cache_enabled(self) -> bool:  # type: ignore[override]
        return self.config.cache_enabled

    @property
    def price(self) -> Price | None:  # type: ignore[override]
        return self.config.price or price_for(self.config.model)

    def cache_identity(self) -> dict[str, Any]:
        return {
            "model": self.config.model,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "params": self.config.params,
        }

    def __repr__(self) -> str:
        return f"OpenAICompatibleClient(model={self.config.model!r}, base_url={safe_url(self.base_url)!r})"

    async def complete(self, request: ChatRequest) -> ChatReply:
        return await _io_loop.call(self._complete(request))

    async def _complete(self, request: ChatRequest) -> ChatReply:
        mode = self._structured_mode(request)
        while True:
            try:
                return await self._send(request, mode)
            except HTTPStatusFailure as failure:
                lower = FALLBACK.get(mode or "") if self._may_fall_back(failure, mode) else None
                if lower is None:
                    raise ModelCallError(
                        f"model call to {safe_url(self.base_url)} ({self.config.model}) was refused "
                        f"with HTTP {failure.status}: {failure.message}",
                        status=failure.status,
                    ) from None
                _RUNG[(self.base_url, self.config.model)] = mode = lower

    def _structured_mode(self, request: ChatRequest) -> str | None:
        if request.response_schema is None:
            return None
        if self.config.structured_output != "auto":
            return self.config.structured_output
        return _RUNG.get((self.base_url, self.config.model), "json_schema")

    def _may_fall_back(self, failure: HTTPStatusFailure, mode: str | None) -> bool:
        """A rejection of the structured-output fields (not of the prompt or the model)."""
        text = failure.message.lower()
        named = _REJECTION_WORDS.get(mode or "", ())
        return (
            self.config.structured_output == "auto"
            and failure.status in (400, 415, 422, 501)
            and any(word in text for word in named)
        )

    async def _send(self, request: ChatRequest, mode: str | None) -> ChatReply:
        body = self._body(request, mode)
        decoded = await post_json(self._endpoint(), body)
        return ChatReply(content=_content_of(decoded), usage=self._usage_of(decoded), structured_mode=mode)

    def secrets(self) -> tuple[str, ...]:
        return (self.config.api_key,) if self.config.api_key else ()

    def _endpoint(self) -> Endpoint:
        headers = {"Content-Type": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        return Endpoint(
            url=f"{self.base_url}/chat/completions",
            headers=headers,
            timeout=self.config.timeout,
            limiter=model_limiter(
                self.base_url, self.config.model, self.config.concurrency, self.config.tokens_per_minute
            ),
            retry=self.config.retry,
            secret=self.config.api_key,
        )

    def _body(self, request: ChatRequest, mode: str | None) -> dict[str, Any]:
        messages = request.messages
        body: dict[str, Any] = {"model": self.config.model}
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        if self.config.max_tokens is not None:
            body["max_tokens"] = self.config.max_tokens
        body.update(self.config.params)
        schema = request.response_schema
        if schema is not None and mode is not None:
            body.update(schema_fields(mode, schema))
            if mode != "json_schema":  # a grammar holds the form; the model still needs the meaning
                messages = with_json_instruction(messages, schema)
        body["messages"] = messages
        return body

    def _usage_of(self, decoded: dict[str, Any]) -> Usage:
        raw = decoded.get("usage") or {}
        prompt = int(raw.get("prompt_tokens") or 0)
        completion = int(raw.get("completion_tokens") or 0)
        price = self.price
        cost = price.cost(prompt, completion) if price else None
        return Usage(prompt_tokens=prompt, completion_tokens=completion, cost_usd=cost, calls=1)


def with_json_instruction(messages: list[Message], schema: ResponseSchema) -> list[Message]:
    """``messages`` with the schema instruction appended to (or given as) the system prompt."""
    instruction = JSON_IN_PROMPT_INSTRUCTION.format(schema=json.dumps(schema.schema, ensure_ascii=False))
    if messages and messages[0].get("role") == "system":
        first = {**messages[0], "content": f"{messages[0].get('content', '')}\n\n{instruction}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": instruction}, *messages]


def _content_of(decoded: dict[str, Any]) -> str:
    message = (decoded["choices"][0] or {}).get("message") or {}
    content = message.get("content")
    if content is None and message.get("refusal"):
        raise ModelReplyError(f"the model refused to answer: {message['refusal']}")
    if isinstance(content, list):  # some servers return content parts
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""
