"""JSON for the store: fast (orjson), and never fails on a value it cannot encode.

orjson refuses some values the standard library accepts (integers beyond 64 bits, lone
surrogates); those fall back to ``json``. Whatever neither can encode is stored as its
``repr``, so one odd value in a model's output never stops an experiment.
"""

from __future__ import annotations

import json
from typing import Any, Optional

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _fallback(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    if hasattr(value, "model_dump"):
        try:
            return value.model_dump(mode="json")
        except Exception:
            return repr(value)
    return repr(value)


def dumps(value: Any) -> Optional[str]:
    if value is None:
        return None
    try:
        return orjson.dumps(value, default=_fallback, option=_OPTIONS).decode()
    except (TypeError, orjson.JSONEncodeError):
        pass
    try:
        return json.dumps(value, default=_fallback)
    except (TypeError, ValueError):  # e.g. a circular reference
        return json.dumps(repr(value))


def loads(text: Optional[str | bytes]) -> Any:
    if text is None:
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # written by the json fallback (lone surrogates)
        return json.loads(text)
