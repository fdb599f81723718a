"""Values given to ``create_run`` / ``update_run`` as LangSmith records them: JSON.

LangSmith serializes a run's inputs, outputs and metadata when they are posted, so what
a user reads back is the same whichever SDK stored it: pydantic models and dataclasses
become their fields (a model's unset ``None`` fields left out), enums their values,
named tuples dicts, sets and tuples lists, dict keys strings, anything else its
``to_dict()`` / ``dict()`` or, failing that, its ``repr``. A value that refers to itself
is its ``repr``. Strings, numbers and bytes stay as they are (the store keeps bytes).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import pathlib
import uuid
from typing import Any

__all__ = ["as_json"]

_DEPTH = 100  # deeper values are their repr, as a cycle is
_SCALARS = (str, int, float, bool, bytes, type(None))


class _Cycle(Exception):
    """Raised where a value is met inside itself; caught by that value, which is then its repr."""

    def __init__(self, target: int) -> None:
        self.target = target


def as_json(value: Any) -> Any:
    """``value`` with every part JSON can hold, as LangSmith's client would post it."""
    return _converted(value, set(), 0)


def _converted(value: Any, seen: set[int], depth: int) -> Any:
    if isinstance(value, _SCALARS) and not isinstance(value, enum.Enum):
        return value
    if id(value) in seen:
        raise _Cycle(id(value))
    if depth > _DEPTH:
        return _repr(value)
    seen.add(id(value))
    try:
        return _parts(value, seen, depth)
    except _Cycle as cycle:
        if cycle.target != id(value):
            raise
        return _repr(value)
    finally:
        seen.discard(id(value))


def _parts(value: Any, seen: set[int], depth: int) -> Any:
    if isinstance(value, dict):
        return {_key(k): _converted(v, seen, depth + 1) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return _parts(value._asdict(), seen, depth)
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_converted(v, seen, depth + 1) for v in value]
    plain = _plain(value)
    return plain if _is_leaf(value) else _converted(plain, seen, depth + 1)


def _is_leaf(value: Any) -> bool:
    """Values whose plain form is final (no parts to convert)."""
    return isinstance(
        value, (enum.Enum, datetime.date, datetime.time, uuid.UUID, decimal.Decimal, pathlib.PurePath, type)
    )


def _plain(value: Any) -> Any:
    """One object as JSON-able data (its parts converted by the caller)."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (uuid.UUID, pathlib.PurePath)):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, type):
        return repr(value)
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):
        try:
            return model_dump(mode="json", exclude_none=True)
        except Exception:  # noqa: BLE001 - a model that cannot dump itself: its other forms
            pass
    if dataclasses.is_dataclass(value):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    for method in ("to_dict", "dict"):
        made = _called(value, method)
        if made is not None:
            return made
    return _repr(value)


def _called(value: Any, method: str) -> dict[str, Any] | None:
    found = getattr(value, method, None)
    if not callable(found):
        return None
    try:
        made = found()
    except Exception:  # noqa: BLE001 - e.g. a dict() that refuses: the next form is tried
        return None
    return made if isinstance(made, dict) else None


def _key(key: Any) -> str:
    """A dict key as JSON text (orjson's coercions, then the key's JSON form as text)."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return "null" if key is None else str(key).lower()
    if isinstance(key, enum.Enum):  # its value, if a key can be one; else the member
        return str(key.value) if isinstance(key.value, (str, int, float)) else str(key)
    if isinstance(key, (set, frozenset)):
        return str(sorted(key, key=repr))
    plain = _plain(key) if _is_leaf(key) else key
    return plain if isinstance(plain, str) else str(plain)


def _repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception:  # noqa: BLE001 - a broken __repr__ names the type instead
        return f"<{type(value).__name__} object>"
