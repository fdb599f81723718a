"""Type-strict equality of plain values, decided in the trusted parent.

bool equals only bool; None only None; ints compare exactly with ints; a float on
either side compares numerically within a ``Tolerance`` (NaN equals NaN), at float32
precision when either side is a float32 result (both rounded to float32 first: ``1/3f``
equals ``1/3``, ``0.3333f`` does not unless the tolerance allows it); str, bytes,
sets and dicts compare by type and content; list and tuple are interchangeable (JSON
datasets cannot express tuples). Nothing here calls a method of the compared values
beyond those of the built-in types, and nothing costs more than linear time in the
size of the values (the decoder refused hash-flooding sets and dicts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from assay.sandbox.harness.codec import Float32, to_float32

__all__ = ["DEFAULT_TOLERANCE", "Tolerance", "ToleranceLike", "as_tolerance", "values_equal"]

DEFAULT_TOLERANCE = 1e-9  # relative


@dataclass(frozen=True)
class Tolerance:
    """``math.isclose(expected, actual, rel_tol=rel_tol, abs_tol=abs_tol)``, and when one
    side is exactly 0 (where a relative tolerance means nothing) ``abs_tol`` is at least
    ``zero_tol``: ``sin(pi)`` is ``1.2e-16``, not 0."""

    rel_tol: float = DEFAULT_TOLERANCE
    abs_tol: float = 0.0
    zero_tol: float = 1e-12

    def __post_init__(self) -> None:
        for name in ("rel_tol", "abs_tol", "zero_tol"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not value >= 0 or math.isinf(value):
                raise ValueError(f"tolerance {name} must be a finite number >= 0, got {value!r}")


ToleranceLike = Tolerance | float


def as_tolerance(tolerance: ToleranceLike) -> Tolerance:
    """A bare number is the relative tolerance (with the default absolute parts)."""
    return tolerance if isinstance(tolerance, Tolerance) else Tolerance(rel_tol=float(tolerance))


def values_equal(expected: Any, actual: Any, tolerance: ToleranceLike = DEFAULT_TOLERANCE) -> bool:
    return _equal(expected, actual, as_tolerance(tolerance))


def _equal(expected: Any, actual: Any, tolerance: Tolerance) -> bool:
    kind_e, kind_a = _kind(expected), _kind(actual)
    if kind_e != kind_a:
        return False
    if kind_e == "number":
        return _numbers_equal(expected, actual, tolerance)
    if kind_e == "complex":
        return _numbers_equal(expected.real, actual.real, tolerance) and _numbers_equal(
            expected.imag, actual.imag, tolerance
        )
    if kind_e == "sequence":
        return len(expected) == len(actual) and all(_equal(e, a, tolerance) for e, a in zip(expected, actual))
    if kind_e == "mapping":
        return _mappings_equal(expected, actual, tolerance)
    if kind_e == "other":
        return False
    return bool(expected == actual)  # None, bool, str, bytes, set: exact built-in equality


def _kind(value: Any) -> str:
    kind = type(value)
    if kind is bool:
        return "bool"
    if kind in (int, float, Float32):
        return "number"
    if kind in (list, tuple):
        return "sequence"
    if kind is dict:
        return "mapping"
    if kind in (set, frozenset):
        return "set"
    if value is None:
        return "none"
    simple = {str: "str", bytes: "bytes", complex: "complex"}
    return simple.get(kind, "other")


def _numbers_equal(expected: Any, actual: Any, tolerance: Tolerance) -> bool:
    if type(expected) is int and type(actual) is int:
        return bool(expected == actual)
    try:
        e, a = _at_common_precision(expected, actual)
    except OverflowError:  # beyond any float (or float32): only an int could equal it
        return False
    if math.isnan(e) or math.isnan(a):
        return math.isnan(e) and math.isnan(a)
    if e == a:
        return True
    if math.isinf(e) or math.isinf(a):
        return False
    abs_tol = max(tolerance.abs_tol, tolerance.zero_tol) if e == 0 or a == 0 else tolerance.abs_tol
    return math.isclose(e, a, rel_tol=tolerance.rel_tol, abs_tol=abs_tol)


def _at_common_precision(expected: Any, actual: Any) -> tuple[float, float]:
    """Both as floats, rounded to float32 when either side is one: a float32 holds no
    more than that, so a double's extra digits are neither owed nor a way to pass."""
    e, a = float(expected), float(actual)
    if type(expected) is Float32 or type(actual) is Float32:
        return to_float32(e), to_float32(a)
    return e, a


def _mappings_equal(expected: dict[Any, Any], actual: dict[Any, Any], tolerance: Tolerance) -> bool:
    if len(expected) != len(actual):
        return False
    # 1, 1.0 and True are one key to a dict: the key's kind must match too
    actual_keys = {(_kind(key), key) for key in actual}
    for key, value in expected.items():
        if (_kind(key), key) not in actual_keys:
            return False
        if not _equal(value, actual[key], tolerance):
            return False
    return True
