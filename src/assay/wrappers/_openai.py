"""``wrap_openai``: every chat completion an OpenAI client makes is traced as an ``llm`` run
(LangSmith's ``langsmith.wrappers.wrap_openai``, with only the import swapped).

``client = wrap_openai(OpenAI())`` (or ``AsyncOpenAI()``) patches
``client.chat.completions.create`` in place and returns the client. Each call is a run
named ``ChatOpenAI`` under the current run (inside an experiment's target, stored with the
row): its inputs are the call's arguments, its outputs the reply message and
``usage_metadata``. A streamed call (``stream=True``) is recorded as it is read: the
caller gets OpenAI's chunks unchanged, the run ends with the message they make up.
"""

from __future__ import annotations

import inspect
from typing import Any, TypeVar

from assay.tracing import traceable
from assay.wrappers._common import awaited, with_call_metadata

C = TypeVar("C")

__all__ = ["wrap_openai"]


def wrap_openai(
    client: C,
    *,
    tracing_extra: dict[str, Any] | None = None,
    chat_name: str = "ChatOpenAI",
    completions_name: str = "OpenAI",
) -> C:
    """Trace ``client.chat.completions.create`` (sync or async client); returns ``client``.
    ``tracing_extra`` may hold ``metadata`` and ``tags`` for every run it records."""
    completions = getattr(getattr(client, "chat", None), "completions", None)
    create = getattr(completions, "create", None)
    if create is None:
        raise TypeError(
            f"wrap_openai() takes an openai.OpenAI or AsyncOpenAI client, got {type(client).__name__}"
        )
    if getattr(create, "__assay_wrapped__", False):
        return client  # wrapping twice would trace every call twice
    extra = dict(tracing_extra or {})
    # The SDK's async create is a plain function returning a coroutine: say what it is.
    asynchronous = inspect.iscoroutinefunction(create) or type(completions).__name__.startswith("Async")
    traced = traceable(
        run_type="llm",
        name=chat_name,
        metadata={"ls_provider": "openai", "ls_model_type": "chat", **(extra.get("metadata") or {})},
        tags=extra.get("tags"),
        process_inputs=_given_arguments,
        process_outputs=_reply_outputs,
        reduce_fn=_streamed_outputs,
    )(awaited(create) if asynchronous else create)
    patched = with_call_metadata(traced, _model_name, asynchronous=asynchronous)
    patched.__assay_wrapped__ = True  # type: ignore[attr-defined]
    completions.create = patched  # type: ignore[union-attr]
    return client


def _model_name(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Each run names the model it asked for (``ls_model_name``), as LangSmith's do."""
    return {"ls_model_name": kwargs.get("model")}


_TRANSPORT = frozenset({"extra_headers", "extra_query", "extra_body", "timeout"})


def _given_arguments(inputs: dict[str, Any]) -> dict[str, Any]:
    """The arguments the caller gave (the SDK's NOT_GIVEN/omit defaults and unset
    transport options left out)."""
    return {
        key: value
        for key, value in inputs.items()
        if type(value).__name__ not in ("NotGiven", "Omit") and not (key in _TRANSPORT and value is None)
    }


def _reply_outputs(reply: Any) -> dict[str, Any]:
    """A ``ChatCompletion`` as LangSmith records it: the first choice's message, plus usage."""
    if isinstance(reply, dict) and "role" in reply:  # what _streamed_outputs made
        return reply
    data = reply.model_dump(exclude_none=True) if hasattr(reply, "model_dump") else reply
    if not isinstance(data, dict) or not data.get("choices"):
        return {"output": data}
    outputs = dict(data["choices"][0].get("message") or {})
    usage = _usage_metadata(data.get("usage"))
    if usage:
        outputs["usage_metadata"] = usage
    return outputs


def _streamed_outputs(chunks: list[Any]) -> dict[str, Any]:
    """The message that streamed chunks make up: content joined, tool calls merged by index."""
    message: dict[str, Any] = {"role": "assistant", "content": ""}
    tool_calls: dict[int, dict[str, Any]] = {}
    usage = None
    for chunk in chunks:
        data = chunk.model_dump(exclude_none=True) if hasattr(chunk, "model_dump") else chunk
        usage = data.get("usage") or usage
        for choice in data.get("choices") or ():
            delta = choice.get("delta") or {}
            message["role"] = delta.get("role") or message["role"]
            message["content"] += delta.get("content") or ""
            for call in delta.get("tool_calls") or ():
                _merge_tool_call(tool_calls.setdefault(call.get("index", 0), {}), call)
    if tool_calls:
        message["tool_calls"] = [tool_calls[index] for index in sorted(tool_calls)]
    if usage:
        message["usage_metadata"] = _usage_metadata(usage)
    return message


def _merge_tool_call(into: dict[str, Any], part: dict[str, Any]) -> None:
    for key in ("id", "type"):
        if part.get(key):
            into[key] = part[key]
    function = into.setdefault("function", {"name": "", "arguments": ""})
    given = part.get("function") or {}
    function["name"] += given.get("name") or ""
    function["arguments"] += given.get("arguments") or ""


def _usage_metadata(usage: Any) -> dict[str, int]:
    if not isinstance(usage, dict):
        return {}
    found = {
        "input_tokens": usage.get("prompt_tokens"),
        "output_tokens": usage.get("completion_tokens"),
        "total_tokens": usage.get("total_tokens"),
    }
    return {key: value for key, value in found.items() if isinstance(value, int)}
