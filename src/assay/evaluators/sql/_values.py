"""Cell values from any driver, brought to one comparable, hashable form.

SQLite returns ``float`` where PostgreSQL returns ``Decimal``; dates come back as
text from one and ``datetime.date`` from the other; expected rows written in a
dataset are JSON. Comparing result sets means comparing these as values, so every
cell goes through ``normalize_value`` first.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

# Integers beyond this lose precision as floats: they are compared exactly only.
_FLOAT_EXACT_INT = 2**53


class _NaN:
    """NaN as a value equal to itself, so two NaN cells compare equal."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _NaN)

    def __hash__(self) -> int:
        return hash("assay-sql-NaN")

    def __repr__(self) -> str:
        return "NaN"


NAN = _NaN()

Cell = None | int | float | str | bytes | _NaN | tuple[Any, ...]
Row = tuple[Cell, ...]


def normalize_value(value: Any) -> Cell:
    """One cell in canonical form: numbers as int/float, temporal values as ISO text."""
    if value is None or (isinstance(value, (str, int, bytes)) and not isinstance(value, bool)):
        return value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return NAN if math.isnan(value) else value
    if isinstance(value, Decimal):
        return _normalize_decimal(value)
    return _normalize_other(value)


def _normalize_decimal(value: Decimal) -> Cell:
    if value.is_nan():
        return NAN
    if value.is_infinite():
        return float(value)
    if value == value.to_integral_value():
        return int(value)
    return float(value)


def _normalize_other(value: Any) -> Cell:
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (list, tuple)):
        return tuple(normalize_value(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    return str(value)


_ALREADY_NORMAL = frozenset({str, int, bytes, type(None)})


def normalize_row(row: Any) -> Row:
    cells: tuple[Any, ...] = tuple(row)
    for value in cells:  # fast path: most SQLite rows hold nothing to convert
        kind = type(value)
        if not (kind in _ALREADY_NORMAL or (kind is float and value == value)):
            return tuple(normalize_value(value) for value in cells)
    return cells


def is_tolerant_number(cell: Cell) -> bool:
    """True for numbers compared with a tolerance: finite, and exactly representable as floats."""
    kind = type(cell)  # exact types: normalized cells are never bool or subclasses
    if kind is float:
        return math.isfinite(cell)  # type: ignore[arg-type]
    return kind is int and -_FLOAT_EXACT_INT < cell < _FLOAT_EXACT_INT  # type: ignore[operator]


@dataclass(frozen=True)
class Tolerance:
    """How far two non-integer numbers may differ: ``rel`` of the larger magnitude, or
    ``abs``, whichever is wider (``math.isclose``). A plain float is both."""

    rel: float
    abs: float

    @classmethod
    def of(cls, tolerance: float | Tolerance) -> Tolerance:
        return tolerance if isinstance(tolerance, Tolerance) else cls(tolerance, tolerance)

    @property
    def widest(self) -> float:
        return max(self.rel, self.abs)

    def reach(self, center: float) -> float:
        """Farther than this from ``center``, nothing is close to it."""
        return max(self.rel * abs(center), self.rel, self.abs)


def cells_close(left: Cell, right: Cell, tolerance: float | Tolerance) -> bool:
    """Equal, or numbers within ``tolerance`` (a float: relative to magnitude, absolute below 1).

    Two integers must be equal: tolerance is for values that went through floating point.
    Arrays compare exactly, as they do when rows are grouped for matching.
    """
    if left == right:
        return True
    if not (is_tolerant_number(left) and is_tolerant_number(right)):
        return False
    if isinstance(left, int) and isinstance(right, int):
        return False
    within = Tolerance.of(tolerance)
    return math.isclose(float(left), float(right), rel_tol=within.rel, abs_tol=within.abs)  # type: ignore[arg-type]


def rows_close(left: Row, right: Row, tolerance: float | Tolerance) -> bool:
    return len(left) == len(right) and all(
        cells_close(a, b, tolerance) for a, b in zip(left, right, strict=True)
    )


# Longest text (and blob, in bytes) a metadata cell keeps; the rest is counted in a marker.
METADATA_TEXT_CHARS = 1_000
METADATA_BLOB_BYTES = 256


def clip_text(text: str, limit: int = METADATA_TEXT_CHARS) -> str:
    """``text`` cut to ``limit`` characters, ending with a marker saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def cell_to_json(cell: Cell) -> Any:
    """A cell as plain JSON for metadata: bytes as hex, non-finite floats as text, long
    text and blobs cut with a marker (metadata is stored with every result)."""
    if isinstance(cell, bytes):
        if len(cell) > METADATA_BLOB_BYTES:
            rest = len(cell) - METADATA_BLOB_BYTES
            return f"0x{cell[:METADATA_BLOB_BYTES].hex()}… [{rest:,} more bytes]"
        return "0x" + cell.hex()
    if isinstance(cell, str):
        return clip_text(cell)
    if isinstance(cell, _NaN):
        return "NaN"
    if isinstance(cell, float) and not math.isfinite(cell):
        return "Infinity" if cell > 0 else "-Infinity"
    if isinstance(cell, tuple):
        return [cell_to_json(item) for item in cell]
    return cell


def row_to_json(row: Row) -> list[Any]:
    return [cell_to_json(cell) for cell in row]
