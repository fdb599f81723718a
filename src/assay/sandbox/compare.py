"""Type-strict equality of plain values, decided in the trusted parent.

bool equals only bool; None only None; ints compare exactly with ints; a float on
either side compares numerically within a tolerance (NaN equals NaN); str, bytes,
sets and dicts compare by type and content; list and tuple are interchangeable (JSON
datasets cannot express tuples). Nothing here calls a method of the compared values
beyond those of the built-in types.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["DEFAULT_TOLERANCE", "values_equal"]


DEFAULT_TOLERANCE = 1e-9


def values_equal(expected: Any, actual: Any, tolerance: float = DEFAULT_TOLERANCE) -> bool:
    kind_e, kind_a = _kind(expected), _kind(actual)
    if kind_e != kind_a:
        return False
    if kind_e == "number":
        return _numbers_equal(expected, actual, tolerance)
    if kind_e == "complex":
        return (_numbers_equal(expected.real, actual.real, tolerance)
                and _numbers_equal(expected.imag, actual.imag, tolerance))
    if kind_e == "sequence":
        return len(expected) == len(actual) and all(
            values_equal(e, a, tolerance) for e, a in zip(expected, actual))
    if kind_e == "mapping":
        return _mappings_equal(expected, actual, tolerance)
    if kind_e == "other":
        return False
    return bool(expected == actual)  # None, bool, str, bytes, set: exact built-in equality


def _kind(value: Any) -> str:
    kind = type(value)
    if kind is bool:
        return "bool"
    if kind in (int, float):
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


def _numbers_equal(expected: Any, actual: Any, tolerance: float) -> bool:
    if type(expected) is int and type(actual) is int:
        return bool(expected == actual)
    e, a = float(expected), float(actual)
    if math.isnan(e) or math.isnan(a):
        return math.isnan(e) and math.isnan(a)
    return math.isclose(e, a, rel_tol=tolerance, abs_tol=tolerance)


def _mappings_equal(expected: dict[Any, Any], actual: dict[Any, Any], tolerance: float) -> bool:
    if len(expected) != len(actual):
        return False
    for key, value in expected.items():
        if key not in actual or _kind(_key_of(actual, key)) != _kind(key):
            return False
        if not values_equal(value, actual[key], tolerance):
            return False
    return True


def _key_of(mapping: dict[Any, Any], key: Any) -> Any:
    """The actual key object equal to ``key`` (1 and True hash alike)."""
    for candidate in mapping:
        if candidate == key:
            return candidate
    return key
