"""JSON for the store: fast (orjson), and never fails on a value it cannot encode.

orjson refuses some values the standard library accepts (integers beyond 64 bits, lone
surrogates); those fall back to ``json``. Whatever neither can encode is stored as its
``repr``, so one odd value in a model's output never stops an experiment.
"""

from __future__ import annotations

import decimal
import json
import re
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY
_LONG_DIGITS = re.compile(r"\d{19}")


def _fallback(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, decimal.Decimal):
        return str(value)  # exact, unlike a float
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="backslashreplace")
    if hasattr(value, "model_dump"):
        try:
            return value.model_dump(mode="json")
        except Exception:
            return repr(value)
    return repr(value)


def dumps(value: Any) -> str | None:
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


def loads(text: str | bytes | None) -> Any:
    if text is None:
        return None
    if isinstance(text, str) and _LONG_DIGITS.search(text):
        return json.loads(text)  # orjson would read an integer beyond 64 bits as a float
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # written by the json fallback (lone surrogates)
        return json.loads(text)
