"""A tolerant reader of JSON replies from models that were only asked for JSON in the prompt.

It accepts what small local models actually send: a code fence, prose before or after,
a ``<think>...</think>`` block from reasoning models. It never guesses values from free text.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["ReplyParseError", "parse_json_reply"]


_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_decoder = json.JSONDecoder()


class ReplyParseError(ValueError):
    """The reply holds no JSON object."""


def parse_json_reply(text: str) -> dict[str, Any]:
    """The first JSON object in ``text``."""
    cleaned = _THINK.sub("", text).strip()
    candidates = [cleaned, *(block.strip() for block in _FENCE.findall(cleaned))]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    found = _first_embedded_object(cleaned)
    if found is not None:
        return found
    preview = " ".join(text.split())[:200]
    raise ReplyParseError(f"the reply holds no JSON object: {preview!r}")


def _first_embedded_object(text: str) -> dict[str, Any] | None:
    start = text.find("{")
    while start != -1:
        try:
            value, _ = _decoder.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None
