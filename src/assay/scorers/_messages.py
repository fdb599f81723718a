"""Reading scorer inputs and outputs: plain strings, chat-message lists, Mastra's
``{"inputMessages": [...]}``, or an example's inputs / a run's outputs dict."""

from __future__ import annotations

from typing import Any

from assay.scorers._base import to_text

_MESSAGE_LIST_KEYS = ("inputMessages", "input_messages", "messages", "outputMessages", "output")


def _messages(value: Any) -> list[dict[str, Any]] | None:
    if isinstance(value, list) and value and all(isinstance(m, dict) and "role" in m for m in value):
        return value
    if isinstance(value, dict):
        for key in _MESSAGE_LIST_KEYS:
            found = _messages(value.get(key))
            if found is not None:
                return found
    return None


def message_text(message: dict[str, Any]) -> str:
    """The text of one message's content (content parts joined), by :func:`output_text`."""
    return to_text({"content": message.get("content")})


def first_user_text(value: Any) -> str:
    """The first user message (Mastra's default source), else the value as text."""
    messages = _messages(value)
    if messages is None:
        return to_text(value)
    for message in messages:
        if message.get("role") == "user" and message_text(message).strip():
            return message_text(message)
    return ""


def last_assistant_text(value: Any) -> str:
    """The last assistant message with text (Mastra's summary/answer), else the value as text."""
    messages = _messages(value)
    if messages is None:
        return to_text(value)
    for message in reversed(messages):
        if message.get("role") == "assistant" and message_text(message).strip():
            return message_text(message)
    return ""


_CONTEXT_KEYS = ("context", "contexts", "documents", "retrieved_context", "sources")


def context_from(value: Any) -> list[str] | None:
    """A ``context`` list found in an inputs dict, if any."""
    if not isinstance(value, dict):
        return None
    for key in _CONTEXT_KEYS:
        found = value.get(key)
        if isinstance(found, str) and found.strip():
            return [found]
        if isinstance(found, list) and found:
            return [to_text(item) for item in found]
    return None
