"""JSON for the store: fast (orjson), and never fails on a value it cannot encode."""

from __future__ import annotations

from typing import Any, Optional

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _fallback(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return repr(value)


def dumps(value: Any) -> Optional[str]:
    if value is None:
        return None
    return orjson.dumps(value, default=_fallback, option=_OPTIONS).decode()


def loads(text: Optional[str | bytes]) -> Any:
    if text is None:
        return None
    return orjson.loads(text)
