"""Plain values across the sandbox boundary: a tagged JSON encoding with exact types.

Only built-in data types cross: None, bool, int, float, str, bytes, complex, list,
tuple, dict, set and frozenset. A JSON object is always a single-key tag
(``{"$tuple": [...]}``), so decoding never runs code and never yields anything but
those types. Subclasses of built-in types are converted to the base type through the
base type's own methods, so an overridden ``__eq__`` or ``__str__`` cannot survive.
"""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Callable
from typing import Any

MAX_DEPTH = 100
MAX_NODES = 2_000_000
MAX_INT_HEX_DIGITS = 20_000  # about 24,000 decimal digits: 2000! has 5,736
MAX_SAME_HASH = 16  # items of one set or dict sharing a hash value: honest data has ~2
_SAFE_INT = 2**53


class Float32(float):
    """A float32 result of a language that has one (C++ ``float``, Java ``Float``, Go
    ``float32``), held as the double of its shortest decimal (``1/3f`` as 0.33333334).
    It is compared at float32 precision (see ``equality``): that is all it can hold."""

    __slots__ = ()


def to_float32(value: float) -> float:
    """``value`` rounded to the nearest float32 (OverflowError past float32's range)."""
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


class UnsupportedValue(TypeError):
    """A value that is not plain data (an arbitrary object, a generator, a cycle)."""


class MalformedValue(ValueError):
    """Encoded data that does not follow the tagged format."""


class ValueOverLimit(MalformedValue):
    """Encoded data over a decoding limit (an integer's digits, a hash-flooding set)."""


def encode(value: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise UnsupportedValue(f"value is nested more than {MAX_DEPTH} levels deep (or contains itself)")
    kind = type(value)
    encoder = _ENCODERS.get(kind)
    if encoder is not None:
        return encoder(value, depth)
    for base, convert in _BASE_CONVERSIONS:
        if isinstance(value, base):
            return encode(convert(value), depth)
    raise UnsupportedValue(
        f"a value of type {kind.__module__}.{kind.__qualname__} is not plain data "
        "(use None, bool, int, float, str, bytes, list, tuple, dict, set)"
    )


def _encode_int(value: int, depth: int) -> Any:
    if -_SAFE_INT < value < _SAFE_INT:
        return value
    sign = "-" if value < 0 else ""
    return {"$int": sign + format(abs(value), "x")}


def _encode_float(value: float, depth: int) -> Any:
    if math.isfinite(value):
        return value
    if math.isnan(value):
        return {"$float": "nan"}
    return {"$float": "inf" if value > 0 else "-inf"}


def _encode_items(items: Any, depth: int) -> list[Any]:
    return [encode(item, depth + 1) for item in items]


def _encode_dict(value: dict[Any, Any], depth: int) -> Any:
    pairs = dict.items(value)
    return {"$dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in pairs]}


_ENCODERS: dict[type, Callable[[Any, int], Any]] = {
    type(None): lambda v, d: None,
    bool: lambda v, d: v,
    str: lambda v, d: v,
    int: _encode_int,
    float: _encode_float,
    list: _encode_items,
    tuple: lambda v, d: {"$tuple": _encode_items(v, d)},
    dict: _encode_dict,
    set: lambda v, d: {"$set": _encode_items(v, d)},
    frozenset: lambda v, d: {"$frozenset": _encode_items(v, d)},
    bytes: lambda v, d: {"$bytes": base64.b64encode(v).decode("ascii")},
    bytearray: lambda v, d: {"$bytes": base64.b64encode(bytes(v)).decode("ascii")},
    complex: lambda v, d: {"$complex": [_encode_float(v.real, d), _encode_float(v.imag, d)]},
}

# Order matters: bool before int. Each conversion uses the base type's own method.
_BASE_CONVERSIONS: list[tuple[type, Callable[[Any], Any]]] = [
    (bool, lambda v: bool(int.__int__(v))),
    (int, int.__int__),
    (float, float.__float__),
    (str, str.__str__),
    (bytes, lambda v: bytes(bytes.__getitem__(v, slice(None)))),
    (list, lambda v: list.__getitem__(v, slice(None))),
    (tuple, lambda v: tuple.__getitem__(v, slice(None))),
    (dict, lambda v: dict(dict.items(v))),
    (set, lambda v: set(set.__iter__(v))),
    (frozenset, lambda v: frozenset(frozenset.__iter__(v))),
]


def decode(data: Any, depth: int = 0, budget: int = MAX_NODES, float32: bool = False) -> Any:
    """Decode a value of at most ``budget`` items (a small JSON text such as ``[[],[],...]``
    would otherwise become millions of objects in the decoding process). ``float32``: the
    sender's language has a float32 type; from any other, a ``$float32`` tag is a forgery
    (it would buy float32's looser comparison for a double's answer) and is refused."""
    count, tagged_float32 = _count_nodes(data, budget)
    if count > budget:
        raise MalformedValue(f"value has more than {budget} items")
    if tagged_float32 and not float32:
        raise MalformedValue("a $float32 value from a language without a float32 type")
    return _decode(data, depth)


def _count_nodes(data: Any, budget: int) -> tuple[int, bool]:
    count, stack, tagged_float32 = 0, [data], False
    while stack and count <= budget:
        item = stack.pop()
        count += 1
        if type(item) is list:
            stack.extend(item)
        elif type(item) is dict:
            tagged_float32 = tagged_float32 or "$float32" in item
            stack.extend(item.values())
    return count, tagged_float32


def _decode(data: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH + 1:
        raise MalformedValue(f"encoded value is nested more than {MAX_DEPTH} levels deep")
    kind = type(data)
    if data is None or kind in (bool, int, float, str):
        return data
    if kind is list:
        return [_decode(item, depth + 1) for item in data]
    if kind is not dict or len(data) != 1:
        raise MalformedValue(f"unexpected encoded value of type {kind.__name__}")
    ((tag, body),) = data.items()
    decoder = _DECODERS.get(tag)
    if decoder is None:
        raise MalformedValue(f"unknown value tag {tag!r}")
    try:
        return decoder(body, depth)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, MalformedValue):
            raise
        raise MalformedValue(f"malformed {tag} value: {exc}") from None


def _decode_list(body: Any, depth: int) -> list[Any]:
    if type(body) is not list:
        raise MalformedValue("expected a list")
    return [_decode(item, depth + 1) for item in body]


def _decode_int(body: Any, depth: int) -> int:
    if type(body) is not str:
        raise MalformedValue("expected a hex string")
    negative = body.startswith("-")
    digits = body[1:] if negative else body
    if len(digits) > MAX_INT_HEX_DIGITS:
        raise ValueOverLimit(f"integer of more than {MAX_INT_HEX_DIGITS} hex digits")
    magnitude = int(digits, 16)
    return -magnitude if negative else magnitude


def _decode_float(body: Any, depth: int) -> float:
    specials = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
    if type(body) in (int, float):
        return float(body)
    if body not in specials:
        raise MalformedValue(f"bad float {body!r}")
    return specials[body]


def _decode_float32(body: Any, depth: int) -> float:
    if type(body) not in (int, float) or not math.isfinite(body):
        raise MalformedValue(f"bad float32 {body!r} (NaN and infinities are $float)")
    try:
        to_float32(body)
    except OverflowError:
        raise MalformedValue(f"float32 {body!r} is beyond a float32's range") from None
    return Float32(body)


def _decode_dict(body: Any, depth: int) -> dict[Any, Any]:
    pairs = _decode_list(body, depth)
    for pair in pairs:
        if type(pair) is not list or len(pair) != 2:
            raise MalformedValue("dict entries must be [key, value] pairs")
    _refuse_hash_flood([pair[0] for pair in pairs])
    return {pair[0]: pair[1] for pair in pairs}


def _decode_set(body: Any, depth: int, kind: type) -> Any:
    items = _decode_list(body, depth)
    _refuse_hash_flood(items)
    return kind(items)


def _refuse_hash_flood(items: list[Any]) -> None:
    """Many keys sharing one hash make building a set or dict quadratic (integers that
    differ by multiples of 2**61 - 1 all hash alike): count them, sorted, before building."""
    if len(items) <= MAX_SAME_HASH:
        return
    try:
        hashes = sorted(map(hash, items))
    except TypeError as exc:
        raise MalformedValue(f"unhashable key: {exc}") from None
    run = 1
    for previous, current in zip(hashes, hashes[1:]):
        run = run + 1 if current == previous else 1
        if run > MAX_SAME_HASH:
            raise ValueOverLimit(
                f"more than {MAX_SAME_HASH} items share one hash value (a hash-flooding pattern)"
            )


def _decode_bytes(body: Any, depth: int) -> bytes:
    if type(body) is not str:
        raise MalformedValue("expected base64 text")
    return base64.b64decode(body.encode("ascii"), validate=True)


def _decode_complex(body: Any, depth: int) -> complex:
    if type(body) is not list or len(body) != 2:
        raise MalformedValue("expected [real, imag]")
    real, imag = (
        _decode_float(part if type(part) is not dict else part.get("$float"), depth) for part in body
    )
    return complex(real, imag)


_DECODERS: dict[str, Callable[[Any, int], Any]] = {
    "$int": _decode_int,
    "$float": _decode_float,
    "$float32": _decode_float32,
    "$tuple": lambda b, d: tuple(_decode_list(b, d)),
    "$dict": _decode_dict,
    "$set": lambda b, d: _decode_set(b, d, set),
    "$frozenset": lambda b, d: _decode_set(b, d, frozenset),
    "$bytes": _decode_bytes,
    "$complex": _decode_complex,
}
