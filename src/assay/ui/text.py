"""Stored text made safe to send: a lone surrogate (valid in a Python ``str``, which a
model's output may hold) cannot be encoded as UTF-8, so it is shown as U+FFFD."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REPLACEMENT", "clean_text", "clean_value"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (unchanged when there is none)."""
    if text.isascii():
        return text
    return _LONE_SURROGATE.sub(REPLACEMENT, text)


def clean_value(value: Any) -> Any:
    """A JSON value with lone surrogates replaced in every string, keys included."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_value(key): clean_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clean_value(item) for item in value]
    return value
