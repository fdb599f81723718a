"""Small helpers shared by the UI's pages over the read model: stored JSON text as values
and previews, and a page's offset."""

from __future__ import annotations

import json
from typing import Any

import orjson

from assay.ui.text import clean_value

PREVIEW_CHARS = 160


def loads(text: str | bytes | None) -> Any:
    if text is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # the store's json fallback wrote a lone surrogate
        return clean_value(json.loads(text))


def preview(text: str | None, limit: int = PREVIEW_CHARS) -> str:
    """A preview of a stored JSON value (possibly cut at the read model's ``PREVIEW_SOURCE_CHARS``): one line
    of at most ``limit`` characters, or a multi-line text with its lines kept (code keeps
    its shape; a table shows it collapsed to its first line)."""
    if text is None:
        return ""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return _clip(text, limit)
    return _clip(_as_text(value), limit)


MULTILINE_PREVIEW_CHARS = 1_200
MULTILINE_PREVIEW_LINES = 30


def _as_text(value: Any) -> str:
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))
    if isinstance(value, str):
        return value
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def _clip(text: str, limit: int) -> str:
    lines = [line.rstrip() for line in text.strip("\n").splitlines()]
    if len(lines) > 1 and any(line.strip() for line in lines[1:]):
        return _clip_lines(lines)
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _clip_lines(lines: list[str]) -> str:
    kept = "\n".join(lines[:MULTILINE_PREVIEW_LINES])
    if len(kept) > MULTILINE_PREVIEW_CHARS:
        return kept[: MULTILINE_PREVIEW_CHARS - 1] + "…"
    return kept + ("\n…" if len(lines) > MULTILINE_PREVIEW_LINES else "")


def offset(page: int, per_page: int) -> int:
    return (max(page, 1) - 1) * per_page
