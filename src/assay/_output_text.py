"""``output_text()``: the one rule for turning an input, output or reference into plain text.

Used by the text evaluators (after they pick a key), the judges (what the model is shown)
and the scorers. The rule, in order:

1. ``None`` is ``""``; a string is itself; a bool or number is its JSON (``true``, ``42``).
2. A chat message is its content; content parts (``[{"type": "text", "text": ...}]``) are
   joined by newlines. A message is a mapping with ``content`` (OpenAI's and LangChain's
   message dicts), an object with ``content`` and a ``role`` or ``type`` (LangChain's
   ``AIMessage``, OpenAI's ``ChatCompletionMessage``), LangChain's serialized form
   (``{"lc": 1, "kwargs": {"content": ...}}``) or a chat completion (object or dict: its
   first choice's message).
3. A list of chat messages is their texts, one per line; when more than one role speaks,
   each line starts with its role (``user: ...``), so a judge sees who said what.
4. Any other mapping: the messages under ``messages`` / ``input_messages`` /
   ``inputMessages``; else the value of its only key; else the first of :data:`TEXT_KEYS`
   it holds, so ``{"text": "A", "answer": "B"}`` is ``"B"`` (``answer`` comes first).
5. Any other pydantic model is read as its ``model_dump()``; anything else is compact JSON
   with sorted keys (``str()`` if it is not JSON-able).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["TEXT_KEYS", "message_text", "output_text"]

#: the keys that hold the text of a mapping, most specific first
TEXT_KEYS = (
    "output",
    "answer",
    "text",
    "response",
    "content",
    "result",
    "prediction",
    "input",
    "question",
    "query",
    "prompt",
    "reference",
    "expected",
    "context",
)
_MESSAGE_KEYS = ("messages", "input_messages", "inputMessages")
#: the ``type`` of LangChain's message dicts (``AIMessage(...).model_dump()``)
_LANGCHAIN_TYPES = frozenset({"ai", "human", "system", "tool", "function", "chat", "AIMessageChunk"})


def output_text(value: Any) -> str:
    """``value`` as plain text, by the rule in this module's docstring."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return _mapping_text(value)
    if isinstance(value, list) and value and all(_is_message(item) for item in value):
        return _messages_text(value)
    message = _message_object(value)
    if message is not None:
        return message
    return _json(value)


def message_text(value: Any) -> str | None:
    """The text of ``value`` when it is a chat message or a chat completion in any of the
    forms of rule 2 (or a list of messages), else ``None``: what a text evaluator compares
    instead of the message's fields."""
    if isinstance(value, Mapping):
        message = _message_mapping(value)
        return _content_text(message["content"]) if message is not None and _speaks(message) else None
    if isinstance(value, list) and value and all(_is_message(item) for item in value):
        if all(_speaks(item) for item in value if isinstance(item, Mapping)):
            return _messages_text(value)
        return None
    return _message_object(value)


def _speaks(message: Mapping[str, Any]) -> bool:
    """A mapping with ``content`` *and* a speaker (a dict such as ``{"title", "content"}``
    is data, not a message)."""
    return "role" in message or message.get("type") in _LANGCHAIN_TYPES


def _is_message(value: Any) -> bool:
    return (isinstance(value, Mapping) and "content" in value) or _has_content(value)


def _has_content(value: Any) -> bool:
    """An object message: LangChain's ``BaseMessage`` (``type``), OpenAI's (``role``)."""
    content = getattr(value, "content", None)
    return isinstance(content, (str, list)) and (hasattr(value, "role") or hasattr(value, "type"))


def _message_object(value: Any) -> str | None:
    if _has_content(value):
        return _content_text(value.content)
    choices = getattr(value, "choices", None)
    if isinstance(choices, list) and choices and _has_content(getattr(choices[0], "message", None)):
        return _content_text(choices[0].message.content)  # an OpenAI ChatCompletion
    return None


def _message_mapping(value: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The message a mapping is or holds as a whole: itself, LangChain's serialized
    ``kwargs``, or a chat completion's first choice's ``message``."""
    if "content" in value:
        return value
    kwargs = value.get("kwargs")
    if "lc" in value and isinstance(kwargs, Mapping) and "content" in kwargs:
        return kwargs
    choices = value.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        message = choices[0].get("message")
        if isinstance(message, Mapping) and "content" in message:
            return message
    return None


def _content_text(content: Any) -> str:
    if (
        isinstance(content, list)
        and content
        and all(isinstance(part, Mapping) and "text" in part for part in content)
    ):
        return "\n".join(output_text(part["text"]) for part in content)
    return output_text(content)


def _messages_text(messages: list[Any]) -> str:
    said = [_role_and_content(message) for message in messages]
    if len({role for role, _ in said}) > 1:
        return "\n".join(f"{role}: {_content_text(content)}" for role, content in said)
    return "\n".join(_content_text(content) for _, content in said)


def _role_and_content(message: Any) -> tuple[Any, Any]:
    if isinstance(message, Mapping):
        return message.get("role", message.get("type")), message["content"]
    return getattr(message, "role", getattr(message, "type", None)), message.content


def _mapping_text(value: Mapping[str, Any]) -> str:
    message = _message_mapping(value)
    if message is not None:
        return _content_text(message["content"])
    for key in _MESSAGE_KEYS:
        found = value.get(key)
        if isinstance(found, list) and found and all(_is_message(item) for item in found):
            return _messages_text(found)
    if len(value) == 1:
        return output_text(next(iter(value.values())))
    for key in TEXT_KEYS:
        if key in value:
            return output_text(value[key])
    return _json(value)


def _json(value: Any) -> str:
    if hasattr(value, "model_dump") and not isinstance(value, type):
        try:
            return output_text(value.model_dump(mode="json"))
        except Exception:  # a model that cannot dump itself is shown as str() below
            pass
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(value)
