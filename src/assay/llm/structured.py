"""Structured replies: ask for a pydantic model's JSON schema, validate, retry, cache.

``StructuredChat.ask`` is what every judge calls. A reply that does not parse or match the
schema (or fails the caller's check) is *repaired*: asked again once with the validation
error shown to the model (``reply_attempts=2``: the reply and one repair). A reply still
unusable becomes a ``ModelReplyError``, which judges record as an error, never a number.
Usage counts both: ``repaired`` (answers that needed a repair) and ``unparsed`` (never usable).
"""

from __future__ import annotations

import contextlib
import copy
import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from assay._budget import current_budget
from assay.errors import ModelNotConfiguredError, ModelReplyError, ReplyCheckError
from assay.llm._cache import SAMPLE, CachedReply, CallCache, cache_key
from assay.llm.chat import ChatClient, ChatReply, ChatRequest, Message, ResponseSchema
from assay.llm.json_reply import ReplyParseError, parse_json_reply
from assay.llm.prices import PRICES_ENV
from assay.llm.transcript import Exchange, scrub
from assay.llm.usage import Usage, UsageMeter

__all__ = ["CORRECTION_PROMPT", "StructuredChat", "T", "judge_sample", "response_schema"]


T = TypeVar("T", bound=BaseModel)

#: Sent back to the model after a reply that could not be used.
CORRECTION_PROMPT = (
    "Your reply could not be used: {error}\n"
    "Answer again with only the JSON object, following the schema exactly."
)


@contextlib.contextmanager
def judge_sample(index: int) -> Iterator[None]:
    """Calls inside are self-consistency sample ``index``: cached apart from the others."""
    token = SAMPLE.set(index)
    try:
        yield
    finally:
        SAMPLE.reset(token)


@functools.lru_cache(maxsize=256)
def response_schema(output: type[BaseModel]) -> ResponseSchema:
    """A strict-mode JSON schema for ``output`` (every field required, no extra fields).

    Cached per class: generating a pydantic schema costs about a millisecond, which is most
    of the CPU a cached judgement would otherwise spend. Treat the result as read-only.
    """
    schema = copy.deepcopy(output.model_json_schema())
    _make_strict(schema)
    return ResponseSchema(name=_schema_name(output), schema=schema)


def _schema_name(output: type[BaseModel]) -> str:
    name = getattr(output, "schema_name", None) or output.__name__
    return "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in str(name))[:64]


def _make_strict(node: Any) -> None:
    if isinstance(node, dict):
        node.pop("title", None)
        node.pop("default", None)
        if node.get("type") == "object" and "properties" in node:
            node["additionalProperties"] = False
            node["required"] = list(node["properties"])
        for key, value in node.items():
            if key in ("properties", "$defs") and isinstance(value, dict):
                for child in value.values():  # names, not schemas: a property may be "title"
                    _make_strict(child)
            else:
                _make_strict(value)
    elif isinstance(node, list):
        for value in node:
            _make_strict(value)


class StructuredChat:
    """A chat client that answers with validated pydantic objects."""

    def __init__(
        self,
        client: ChatClient,
        *,
        reply_attempts: int = 2,
        store_getter: Callable[[], Any] | None = None,
    ) -> None:
        if reply_attempts < 1:
            raise ValueError(f"reply_attempts must be >= 1, got {reply_attempts}")
        self.client = client
        self.reply_attempts = reply_attempts
        self._store_getter = store_getter

    async def ask(
        self,
        messages: list[Message],
        output: type[T],
        *,
        meter: UsageMeter,
        check: Callable[[T], None] | None = None,
    ) -> T:
        schema = response_schema(output)
        cache = self._cache()
        key = cache_key(self.client, messages, schema) if cache is not None else None
        if cache is not None and key is not None:
            hit = await cache.get(key)
            value = _usable(hit.content, output, check)[0] if hit is not None else None
            if hit is not None and value is not None:
                meter.add(Usage(calls=1, cached_calls=1, cost_usd=self._zero_cost()))
                meter.record(Exchange(tuple(messages), hit.content, cached=True), self.client.secrets())
                return value
        budget = current_budget()
        if budget is not None and self.client.price is None:
            raise ModelNotConfiguredError(
                f"max_cost needs the price of judge model {self.client.model_name!r}: pass "
                "ChatModel(..., price=Price(input_per_million=..., output_per_million=...)) or "
                f"list it in the price table ({PRICES_ENV})"
            )
        value, reply = await self._ask_model(messages, schema, output, meter, check)
        if cache is not None and key is not None:
            usage = reply.usage
            await cache.put(key, CachedReply(reply.content, usage.prompt_tokens, usage.completion_tokens))
        return value

    async def _ask_model(
        self,
        messages: list[Message],
        schema: ResponseSchema,
        output: type[T],
        meter: UsageMeter,
        check: Callable[[T], None] | None,
    ) -> tuple[T, ChatReply]:
        conversation = list(messages)
        problem, content = "", ""
        for attempt in range(self.reply_attempts):
            reply = await self.client.complete(ChatRequest(conversation, schema))
            meter.add(reply.usage)
            budget = current_budget()
            if budget is not None:
                budget.add(reply.usage.cost_usd)
            content = reply.content
            meter.record(Exchange(tuple(conversation), content, attempt + 1), self.client.secrets())
            value, problem = _usable(content, output, check)
            if value is not None:
                if attempt:
                    meter.add(Usage(repaired=1))
                return value, reply
            conversation = [
                *messages,
                {"role": "assistant", "content": content},
                {"role": "user", "content": CORRECTION_PROMPT.format(error=problem)},
            ]
        meter.add(Usage(unparsed=1))
        secrets = self.client.secrets()  # the reply is quoted in the error, which is stored
        raise ModelReplyError(
            f"the judge model never gave a usable {schema.name} reply in "
            f"{self.reply_attempts} attempt(s); last problem: {scrub(problem, secrets)}",
            reply=scrub(content[:2000], secrets),
        )

    def _cache(self) -> CallCache | None:
        if not self.client.cache_enabled:
            return None
        if self._store_getter is not None:
            return CallCache(self._store_getter())
        from assay.store.current import current_store

        return CallCache(current_store())

    def _zero_cost(self) -> float | None:
        return 0.0 if self.client.price is not None else None


def _usable(content: str, output: type[T], check: Callable[[T], None] | None) -> tuple[T | None, str]:
    """The validated reply, or None and what was wrong with it."""
    try:
        value = output.model_validate(parse_json_reply(content))
        if check is not None:
            check(value)
    except ReplyParseError as exc:
        return None, str(exc)
    except ValidationError as exc:
        return None, f"it does not match the schema: {_brief(exc)}"
    except ReplyCheckError as exc:
        return None, str(exc)
    return value, ""


def _brief(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(part) for part in error["loc"]) or "(root)"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)
