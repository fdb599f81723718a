"""Small helpers shared by the UI's read-only queries."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import orjson

from assay.ui.text import clean_value

PREVIEW_SOURCE_CHARS = 4000
"""How much of a JSON column a table page reads: enough for a preview, never a whole blob."""

PREVIEW_CHARS = 160


def marks(count: int) -> str:
    return ", ".join("?" * count)


def like_pattern(text: str) -> str:
    """A LIKE pattern matching ``text`` literally anywhere (with ESCAPE '\\')."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def loads(text: str | bytes | None) -> Any:
    if text is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # the store's json fallback wrote a lone surrogate
        return clean_value(json.loads(text))


def preview(text: str | None, limit: int = PREVIEW_CHARS) -> str:
    """A preview of a stored JSON value (possibly cut at PREVIEW_SOURCE_CHARS): one line
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


def version_clause(alias: str, version: int | None) -> tuple[str, tuple[Any, ...]]:
    """Examples alive at ``version`` (None: the current version)."""
    if version is None:
        return f"{alias}.removed_version IS NULL", ()
    return (
        f"{alias}.added_version <= ? AND ({alias}.removed_version IS NULL OR {alias}.removed_version > ?)",
        (version, version),
    )


def in_list(values: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    return f"({marks(len(values))})", tuple(values)
