"""``wrap_anthropic``: every message an Anthropic client creates is traced as an ``llm`` run
(LangSmith's ``langsmith.wrappers.wrap_anthropic``, with only the import swapped).

``client = wrap_anthropic(Anthropic())`` (or ``AsyncAnthropic()``) patches
``client.messages.create`` and ``client.messages.stream`` in place and returns the client.
Each call is a run named ``ChatAnthropic``: its inputs are the call's arguments (the
``system`` prompt as the first message), its outputs the
reply message with ``usage_metadata`` (a tool call also as OpenAI-style ``tool_calls``).
A streamed call (``stream=True``, or the ``stream()`` helper) is recorded as it is read:
the caller gets Anthropic's events unchanged, the run ends with the message they make up.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Sequence
from types import TracebackType
from typing import Any, TypeVar

from assay.tracing import trace, traceable
from assay.wrappers._common import awaited, given, with_call_metadata

C = TypeVar("C")

__all__ = ["wrap_anthropic"]

_TRANSPORT = frozenset({"extra_headers", "extra_query", "extra_body", "timeout"})


def wrap_anthropic(
    client: C,
    *,
    tracing_extra: dict[str, Any] | None = None,
    chat_name: str = "ChatAnthropic",
    completions_name: str = "Anthropic",
) -> C:
    """Trace ``client.messages.create`` and ``client.messages.stream`` (sync or async
    client), and ``client.beta.messages.create`` where the SDK has it; returns ``client``.
    ``tracing_extra`` may hold ``metadata`` and ``tags`` for every run it records.
    (``completions_name``: LangSmith's legacy Text Completions, gone from ``anthropic`` 1.x.)"""
    messages = getattr(client, "messages", None)
    if getattr(messages, "create", None) is None:
        raise TypeError(
            f"wrap_anthropic() takes an anthropic.Anthropic or AsyncAnthropic client, got {type(client).__name__}"
        )
    if getattr(messages.create, "__assay_wrapped__", False):  # type: ignore[union-attr]
        return client  # wrapping twice would trace every call twice
    extra = dict(tracing_extra or {})
    run = {
        "name": chat_name,
        "metadata": {"ls_provider": "anthropic", "ls_model_type": "chat", **(extra.get("metadata") or {})},
        "tags": extra.get("tags"),
    }
    _trace_messages(messages, run)
    beta = getattr(getattr(client, "beta", None), "messages", None)
    if getattr(beta, "create", None) is not None:
        _trace_messages(beta, run)
    return client


def _trace_messages(messages: Any, run: dict[str, Any]) -> None:
    """Patch a messages resource's ``create`` (and ``stream``, where it has one) in place."""
    create = messages.create
    asynchronous = inspect.iscoroutinefunction(create) or type(messages).__name__.startswith("Async")
    traced = traceable(
        run_type="llm",
        name=run["name"],
        metadata=run["metadata"],
        tags=run["tags"],
        process_inputs=_given_arguments,
        process_outputs=_message_outputs,
        reduce_fn=_streamed_outputs,
    )(awaited(create) if asynchronous else create)
    patched = with_call_metadata(traced, _call_metadata, asynchronous=asynchronous)
    patched.__assay_wrapped__ = True  # type: ignore[attr-defined]
    messages.create = patched
    stream = getattr(messages, "stream", None)
    if stream is not None:
        messages.stream = lambda **kwargs: _TracedStreamManager(stream, kwargs, run)


def _call_metadata(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The model and sampling options a call asked for, as LangSmith's ``ls_*`` keys."""
    stop = kwargs.get("stop_sequences")
    found = {
        "ls_model_name": kwargs.get("model"),
        "ls_max_tokens": kwargs.get("max_tokens"),
        "ls_temperature": kwargs.get("temperature"),
        "ls_stop": [stop] if isinstance(stop, str) else stop,
    }
    return {key: value for key, value in found.items() if value is not None and given(value)}


def _given_arguments(inputs: dict[str, Any]) -> dict[str, Any]:
    """The arguments the caller gave, as LangSmith records them: the SDK's defaults and
    unset transport options left out, ``system`` as the first message."""
    kept = {
        key: value
        for key, value in inputs.items()
        if given(value) and value is not None and not (key in _TRANSPORT and value is None)
    }
    if "system" in kept:
        kept["messages"] = [{"role": "system", "content": kept.pop("system")}, *kept.get("messages", [])]
    return kept


def _message_outputs(reply: Any) -> dict[str, Any]:
    """A ``Message`` as LangSmith records it: its fields, ``usage`` as ``usage_metadata``,
    tool uses also as ``tool_calls`` (with the text as ``content``)."""
    if isinstance(reply, dict) and "role" in reply:  # what _streamed_outputs made
        return reply
    data = reply.model_dump() if hasattr(reply, "model_dump") else reply
    if not isinstance(data, dict) or "content" not in data:
        return {"output": data}
    return _as_outputs(data)


def _as_outputs(data: dict[str, Any]) -> dict[str, Any]:
    outputs = {key: value for key, value in data.items() if key not in ("type", "usage")}
    usage = _usage_metadata(data.get("usage"))
    if usage:
        outputs["usage_metadata"] = usage
    blocks = [b for b in outputs.get("content") or [] if isinstance(b, dict)]
    uses = [b for b in blocks if b.get("type") == "tool_use"]
    if uses:
        outputs["content"] = "".join(b.get("text") or "" for b in blocks if b.get("type") == "text") or None
        outputs["tool_calls"] = [
            {
                "id": use.get("id", f"call_{index}"),
                "type": "function",
                "index": index,
                "function": {"name": use.get("name", ""), "arguments": json.dumps(use.get("input") or {})},
            }
            for index, use in enumerate(uses)
        ]
    return outputs


def _usage_metadata(usage: Any) -> dict[str, Any]:
    """Anthropic's usage as LangSmith's ``usage_metadata``: cache tokens are counted on
    top of ``input_tokens`` there, so they are added in (and detailed)."""
    if not isinstance(usage, dict):
        return {}
    details = {
        "cache_read": usage.get("cache_read_input_tokens") or 0,
        "cache_creation": usage.get("cache_creation_input_tokens") or 0,
    }
    details = {key: value for key, value in details.items() if value}
    inputs = (usage.get("input_tokens") or 0) + sum(details.values())
    outputs = usage.get("output_tokens") or 0
    found: dict[str, Any] = {
        "input_tokens": inputs,
        "output_tokens": outputs,
        "total_tokens": inputs + outputs,
    }
    if details:
        found["input_token_details"] = details
    return found


def _streamed_outputs(events: Sequence[Any]) -> dict[str, Any]:
    """The message that streamed events make up: text joined, a tool's JSON input parsed
    from its parts, the stop reason and usage from ``message_delta``."""
    message: dict[str, Any] = {"role": "assistant", "content": []}
    partial: dict[int, str] = {}
    for event in events:
        data = event.model_dump() if hasattr(event, "model_dump") else event
        if not isinstance(data, dict):
            continue
        kind = data.get("type")
        if kind == "message_start":
            message.update({k: v for k, v in (data.get("message") or {}).items() if k != "content"})
        elif kind == "content_block_start":
            message["content"].append(dict(data.get("content_block") or {}))
        elif kind == "content_block_delta" and message["content"]:
            _add_delta(message["content"][-1], data.get("delta") or {}, partial, len(message["content"]) - 1)
        elif kind == "message_delta":
            message.update(data.get("delta") or {})
            counted = {k: v for k, v in (data.get("usage") or {}).items() if v is not None}
            message["usage"] = {**(message.get("usage") or {}), **counted}
    for index, text in partial.items():
        message["content"][index]["input"] = _parsed(text)
    return _as_outputs(message)


def _add_delta(block: dict[str, Any], delta: dict[str, Any], partial: dict[int, str], index: int) -> None:
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = (block.get("text") or "") + (delta.get("text") or "")
    elif kind == "input_json_delta":
        partial[index] = partial.get(index, "") + (delta.get("partial_json") or "")
    elif kind == "thinking_delta":
        block["thinking"] = (block.get("thinking") or "") + (delta.get("thinking") or "")


def _parsed(text: str) -> Any:
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return text  # a stream cut mid-input: the parts as they came


class _TracedStreamManager:
    """``client.messages.stream(...)``'s context manager, traced: the run starts when the
    block is entered (current while it runs, as LangSmith's is while the text streams) and
    ends with the message read so far when it is left."""

    def __init__(self, open_stream: Any, kwargs: dict[str, Any], run: dict[str, Any]) -> None:
        self._open, self._kwargs = open_stream, kwargs
        self._trace = trace(
            run["name"],
            "llm",
            inputs=_given_arguments(kwargs),
            metadata={**run["metadata"], **_call_metadata(kwargs)},
            tags=run["tags"],
        )
        self._manager: Any = None
        self._stream: Any = None

    def __enter__(self) -> Any:
        self._trace.__enter__()
        try:
            self._manager = self._open(**self._kwargs)
            self._stream = self._manager.__enter__()
        except BaseException as exc:
            self._trace.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self._stream

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._end()
        try:
            self._manager.__exit__(kind, error, tb)
        finally:
            self._trace.__exit__(kind, error, tb)

    async def __aenter__(self) -> Any:
        await self._trace.__aenter__()
        try:
            self._manager = self._open(**self._kwargs)
            self._stream = await self._manager.__aenter__()
        except BaseException as exc:
            await self._trace.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self._stream

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._end()
        try:
            await self._manager.__aexit__(kind, error, tb)
        finally:
            await self._trace.__aexit__(kind, error, tb)

    def _end(self) -> None:
        """The run's outputs: the message as far as the block read it."""
        run = self._trace.run
        try:
            snapshot = self._stream.current_message_snapshot
        except Exception:  # noqa: BLE001 - nothing read yet: no message to keep
            return
        if run is not None and snapshot is not None:
            run.outputs = _message_outputs(snapshot)
