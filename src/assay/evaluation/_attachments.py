"""Each target and evaluator reads an example's files from their start.

A stored attachment gives a new reader at each look-up already; a given one (data passed
inline, ``{"mime_type", "reader": BytesIO(...)}``) is handed over with a copy of its
reader, or its reader rewound when it cannot be copied, so what the target read is
still there for every evaluator (LangSmith's behaviour)."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

__all__ = ["fresh_attachments"]


def fresh_attachments(attachments: Mapping[str, Any] | None) -> dict[str, Any]:
    if not attachments:
        return {}
    return {name: _fresh(value) for name, value in attachments.items()}


def _fresh(value: Any) -> Any:
    if not isinstance(value, dict):
        return value  # a stored attachment (a new reader per look-up), or a given shape
    reader = value.get("reader")
    getvalue = getattr(reader, "getvalue", None)
    if callable(getvalue):
        return {**value, "reader": io.BytesIO(getvalue())}
    seek = getattr(reader, "seek", None)
    if callable(seek):
        seek(0)
    return value
