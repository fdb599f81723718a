"""Small helpers shared by the read model's queries: SQL text, and rows as typed records."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

__all__ = ["PREVIEW_SOURCE_CHARS", "in_list", "like_pattern", "marks", "record", "records", "version_clause"]

PREVIEW_SOURCE_CHARS = 4000
"""How much of a JSON column a table page reads: enough for a preview, never a whole blob."""

R = TypeVar("R")


def marks(count: int) -> str:
    return ", ".join("?" * count)


def in_list(values: Sequence[Any]) -> tuple[str, tuple[Any, ...]]:
    """``(?, ?, ...)`` and its parameters (callers never pass an empty list: PostgreSQL
    refuses ``IN ()``)."""
    return f"({marks(len(values))})", tuple(values)


def like_pattern(text: str) -> str:
    """A LIKE pattern matching ``text`` literally anywhere (with ESCAPE '\\')."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def version_clause(alias: str, version: int | None) -> tuple[str, tuple[Any, ...]]:
    """Examples alive at ``version`` (None: the current version)."""
    if version is None:
        return f"{alias}.removed_version IS NULL", ()
    return (
        f"{alias}.added_version <= ? AND ({alias}.removed_version IS NULL OR {alias}.removed_version > ?)",
        (version, version),
    )


def records(cls: type[R], rows: Iterable[Any]) -> list[R]:
    """Rows (SQLite's or PostgreSQL's, read by column name) as records of the dataclass
    ``cls``, whose field names are the query's column names."""
    names = [field.name for field in dataclasses.fields(cls)]  # type: ignore[arg-type]
    return [cls(**{name: row[name] for name in names}) for row in rows]


def record(cls: type[R], row: Any) -> R | None:
    return None if row is None else records(cls, [row])[0]
