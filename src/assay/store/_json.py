"""JSON for the store: exact values, fast (orjson), and never fails on a value.

Plain JSON is stored as it is. What JSON cannot say is stored as a one-key tagged
object, the tags of the sandbox codec (``assay.sandbox.harness.codec``):

=================  =====================================  ==============================
value              stored as                               why
=================  =====================================  ==============================
NaN, inf, -inf     ``{"$float": "nan" | "inf" | "-inf"}``  JSON has no such numbers
int beyond 64 bits ``{"$int": "-1f..."}`` (hex)           text conversion is limited
tuple              ``{"$tuple": [...]}``                   JSON has lists only
set, frozenset     ``{"$set": [...]}``, ``{"$frozenset"}``
bytes              ``{"$bytes": "<base64>"}``
complex            ``{"$complex": [re, im]}``
dict whose keys    ``{"$dict": [[k, v], ...]}``            JSON keys are strings; also
are not all str                                            escapes a dict that looks
                                                           like a tag
=================  =====================================  ==============================

-0.0 and every string (lone surrogates and NULs included, as ``\\ud800`` and
``\\u0000`` escapes) are plain JSON. Data stored before tags existed has none of them
and reads back as it always did. Whatever is not plain data (an arbitrary object) is
stored as its ``repr``; a pydantic model as its JSON dump.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import math
import reprlib
import uuid
from collections.abc import Callable
from typing import Any

import orjson

_OPTIONS = orjson.OPT_SERIALIZE_NUMPY
# A run of 19 digits may be an integer beyond 64 bits. Found by mapping every ASCII digit
# to "0" and looking for 19 of them: ~4-9x faster than a regular expression's search
# (0.3 against 1.3 us for a typical 90-character record), on every value read back.
_DIGITS_AS_ZEROS = bytes.maketrans(b"0123456789", b"0" * 10)
_NINETEEN_DIGITS = b"0" * 19
_I64_MIN, _U64_MAX = -(2**63), 2**64 - 1
TAGS = frozenset({"$float", "$int", "$tuple", "$set", "$frozenset", "$bytes", "$complex", "$dict"})


def _fallback(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return str(value)  # exact, unlike a float
    if isinstance(value, uuid.UUID):
        return str(value)  # as orjson writes it, when the stdlib encoder takes over
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if hasattr(value, "model_dump"):
        try:
            return tag(value.model_dump(mode="json"))
        except Exception:
            return safe_repr(value)
    return safe_repr(value)


def safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception:  # a huge int, a broken __repr__
        return f"<{type(value).__name__} that cannot be shown>"


def dumps(value: Any) -> str | None:
    if value is None:
        return None
    try:
        tagged = _tag_dict(value, 0) if type(value) is dict else tag(value)  # most values: a dict
    except _TooDeep:  # or refers to itself
        tagged = _shallow(value)
    try:
        return orjson.dumps(tagged, default=_fallback, option=_OPTIONS).decode()
    except (TypeError, orjson.JSONEncodeError):  # lone surrogates, deep nesting
        pass
    try:
        return json.dumps(tagged, default=_fallback, allow_nan=False)
    except (TypeError, ValueError, RecursionError):  # e.g. a circular reference
        return json.dumps(safe_repr(value))


def loads(text: str | bytes | None) -> Any:
    if text is None:
        return None
    if isinstance(text, str) and _has_long_digits(text):
        value = json.loads(text)  # orjson would read an integer beyond 64 bits as a float
    else:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:  # written by the json fallback (lone surrogates)
            value = json.loads(text)
    marker = '"$' if isinstance(text, str) else b'"$'
    return untag(value) if marker in text else value  # type: ignore[operator]


def _has_long_digits(text: str) -> bool:
    encoded = text.encode("utf-8", "surrogatepass")
    return encoded.translate(_DIGITS_AS_ZEROS).find(_NINETEEN_DIGITS) >= 0


# -- tagging ---------------------------------------------------------------------------
MAX_DEPTH = 200
"""Containers nested deeper than this (or one that holds itself) are not stored whole
(``_shallow``): a fixed bound, below orjson's and within any caller's recursion limit, so
that the same value is stored the same from any thread or process."""


class _TooDeep(Exception):
    pass


def tag(value: Any, depth: int = 0) -> Any:
    """``value`` with what JSON cannot say replaced by tags; the same object when nothing
    needs one (the common case costs a walk, not a copy). ``depth``: the containers
    around it."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    handler = _TAGGERS.get(kind)
    if handler is not None:
        return handler(value, depth)
    for base in _SUBCLASSED:  # OrderedDict, IntEnum...: stored as their base type
        if isinstance(value, base):
            return _TAGGERS[base](value, depth)
    return value


def _tag_int(value: int, depth: int) -> Any:
    if _I64_MIN <= value <= _U64_MAX:
        return value
    return {"$int": ("-" if value < 0 else "") + format(abs(value), "x")}


def _tag_float(value: float, depth: int) -> Any:
    if math.isfinite(value):
        return value if type(value) is float else float(value)
    return {"$float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}


def _inside(depth: int) -> int:
    if depth >= MAX_DEPTH:
        raise _TooDeep
    return depth + 1


def _tag_list(value: list[Any], depth: int) -> list[Any]:
    depth = _inside(depth)
    tagged = [tag(item, depth) for item in value]
    return value if all(a is b for a, b in zip(tagged, value)) else tagged


def _tag_dict(value: dict[Any, Any], depth: int) -> Any:
    if depth >= MAX_DEPTH:  # ``_inside``, inline: every row's values come through here
        raise _TooDeep
    depth += 1
    if len(value) == 1 and next(iter(value)) in TAGS:
        return _as_pairs(value, depth)
    # One pass, allocating nothing when nothing needs a tag (the common case: every row's
    # inputs, outputs and extra go through here). Plain JSON scalars are checked inline.
    changed: dict[str, Any] | None = None
    for key, item in value.items():
        if type(key) is not str:
            return _as_pairs(value, depth)
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if _I64_MIN <= item <= _U64_MAX:
                continue
        elif kind is float and math.isfinite(item):
            continue
        tagged = tag(item, depth)
        if tagged is not item:
            if changed is None:
                changed = {}
            changed[key] = tagged
    if changed is None:
        return value
    return {key: changed[key] if key in changed else item for key, item in value.items()}


def _as_pairs(value: dict[Any, Any], depth: int) -> dict[str, Any]:
    return {"$dict": [[tag(key, depth + 1), tag(item, depth + 1)] for key, item in value.items()]}


def _tagged_items(name: str) -> Callable[[Any, int], Any]:
    """The tagger of a container stored as ``{name: [items]}``."""

    def tagger(value: Any, depth: int) -> Any:
        depth = _inside(depth)
        return {name: [tag(item, depth) for item in value]}

    return tagger


_TAGGERS: dict[type, Callable[[Any, int], Any]] = {
    int: _tag_int,
    float: _tag_float,
    list: _tag_list,
    dict: _tag_dict,
    tuple: _tagged_items("$tuple"),
    set: _tagged_items("$set"),
    frozenset: _tagged_items("$frozenset"),
    bytes: lambda v, _: {"$bytes": base64.b64encode(v).decode("ascii")},
    bytearray: lambda v, _: {"$bytes": base64.b64encode(bytes(v)).decode("ascii")},
    complex: lambda v, _: {"$complex": [_tag_float(v.real, 0), _tag_float(v.imag, 0)]},
}


def _shallow(value: Any, levels: int = 3) -> Any:
    """A value too deep (or holding itself) to store whole: its first ``levels`` levels
    of dicts (with string keys) and lists keep their shape, each item that can be stored
    whole is, and the rest is bounded text. So a row's inputs, outputs, metadata and
    traced child runs keep the shape they are read back as."""
    if levels and type(value) is list:
        return [_whole_or_shallow(item, levels) for item in value]
    if levels and isinstance(value, dict) and all(type(key) is str for key in value):
        return {key: _whole_or_shallow(item, levels) for key, item in value.items()}
    return _bounded_repr(value)


def _whole_or_shallow(item: Any, levels: int) -> Any:
    try:
        return tag(item, 1)
    except _TooDeep:
        return _shallow(item, levels - 1)


def _bounded_repr(value: Any) -> str:
    try:
        return _BOUNDED.repr(value)
    except Exception:  # an int past the digits limit, a broken __repr__ deep inside
        return f"<{type(value).__name__} that cannot be shown>"


_BOUNDED = reprlib.Repr()  # the first levels and items of a value, deterministically
_BOUNDED.maxlevel = 8
_BOUNDED.maxdict = _BOUNDED.maxlist = _BOUNDED.maxtuple = _BOUNDED.maxset = 100
_BOUNDED.maxfrozenset = _BOUNDED.maxdeque = _BOUNDED.maxarray = 100
_BOUNDED.maxstring = _BOUNDED.maxother = _BOUNDED.maxlong = 1000


_SUBCLASSED = (dict, list, tuple, set, frozenset, float)


def untag(value: Any) -> Any:
    """The inverse of ``tag``. A malformed tag is kept as the plain dict it is."""
    kind = type(value)
    if kind is list:
        return [untag(item) for item in value]
    if kind is not dict:
        return value
    if len(value) == 1:
        ((key, body),) = value.items()
        if key in TAGS:
            try:
                return _UNTAGGERS[key](body)
            except (TypeError, ValueError, KeyError, AttributeError):
                pass
    return {key: untag(item) for key, item in value.items()}


def _untag_int(body: str) -> int:
    negative = body.startswith("-")
    magnitude = int(body[1:] if negative else body, 16)
    return -magnitude if negative else magnitude


def _untag_dict(body: list[Any]) -> dict[Any, Any]:
    result: dict[Any, Any] = {}
    for key, item in body:
        result[untag(key)] = untag(item)
    return result


_SPECIAL_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_UNTAGGERS: dict[str, Callable[[Any], Any]] = {
    "$float": lambda b: _SPECIAL_FLOATS[b] if type(b) is str else float(b),
    "$int": _untag_int,
    "$tuple": lambda b: tuple(untag(item) for item in b),
    "$set": lambda b: {untag(item) for item in b},
    "$frozenset": lambda b: frozenset(untag(item) for item in b),
    "$bytes": lambda b: base64.b64decode(b.encode("ascii"), validate=True),
    "$complex": lambda b: complex(untag(b[0]), untag(b[1])),
    "$dict": _untag_dict,
}
