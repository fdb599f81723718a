"""``output_text()``: the one rule for turning an input, output or reference into plain text.

Used by the text evaluators (after they pick a key), the judges (what the model is shown)
and the scorers. The rule, in order:

1. ``None`` is ``""``; a string is itself; a bool or number is its JSON (``true``, ``42``).
2. A chat message (a mapping with ``content``) is its content; content parts
   (``[{"type": "text", "text": ...}]``) are joined by newlines.
3. A list of chat messages is their texts, one per line; when more than one role speaks,
   each line starts with its role (``user: ...``), so a judge sees who said what.
4. Any other mapping: the messages under ``messages`` / ``input_messages`` /
   ``inputMessages``; else the value of its only key; else the first of :data:`TEXT_KEYS`
   it holds, so ``{"text": "A", "answer": "B"}`` is ``"B"`` (``answer`` comes first).
5. Anything else is compact JSON with sorted keys (``str()`` if it is not JSON-able).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["TEXT_KEYS", "output_text"]

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
    return _json(value)


def _is_message(value: Any) -> bool:
    return isinstance(value, Mapping) and "content" in value


def _content_text(content: Any) -> str:
    if (
        isinstance(content, list)
        and content
        and all(isinstance(part, Mapping) and "text" in part for part in content)
    ):
        return "\n".join(output_text(part["text"]) for part in content)
    return output_text(content)


def _messages_text(messages: list[Mapping[str, Any]]) -> str:
    roles = {message.get("role") for message in messages}
    if len(roles) > 1:
        return "\n".join(f"{m.get('role')}: {_content_text(m['content'])}" for m in messages)
    return "\n".join(_content_text(message["content"]) for message in messages)


def _mapping_text(value: Mapping[str, Any]) -> str:
    if "content" in value:
        return _content_text(value["content"])
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
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(value)
