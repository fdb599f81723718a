"""Structural comparison of two JSON values, reporting where they differ by JSON path."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PathPart = str | int


def json_path(parts: Iterable[PathPart], *, any_index: bool = False) -> str:
    """``["items", 0, "unit price"]`` -> ``$.items[0]["unit price"]`` (``[*]`` if any_index)."""
    path = "$"
    for part in parts:
        if isinstance(part, int):
            path += "[*]" if any_index else f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            path += f".{part}"
        else:
            path += f"[{json.dumps(part, ensure_ascii=False)}]"
    return path


@dataclass(frozen=True)
class _Options:
    ignore_keys: frozenset[str]
    ignore_list_order: bool


def json_differences(
    actual: Any,
    expected: Any,
    *,
    ignore_keys: frozenset[str] = frozenset(),
    ignore_list_order: bool = False,
    limit: int = 20,
) -> list[str]:
    """Human-readable differences, at most ``limit``; empty when the values are equal."""
    found: list[str] = []
    _compare(actual, expected, (), _Options(ignore_keys, ignore_list_order), found, limit)
    return found


def _ignored(key: str, path: tuple[PathPart, ...], options: _Options) -> bool:
    """``key`` itself, its path (``$.meta.id``) or its path over any index (``$.items[*].id``)."""
    if key in options.ignore_keys:
        return True
    full = (*path, key)
    return json_path(full) in options.ignore_keys or json_path(full, any_index=True) in options.ignore_keys


def _compare(
    actual: Any, expected: Any, path: tuple[PathPart, ...], options: _Options, found: list[str], limit: int
) -> None:
    if len(found) >= limit:
        return
    if isinstance(expected, dict) and isinstance(actual, dict):
        _compare_objects(actual, expected, path, options, found, limit)
    elif isinstance(expected, list) and isinstance(actual, list):
        if options.ignore_list_order:
            _compare_unordered(actual, expected, path, options, found)
        else:
            _compare_lists(actual, expected, path, options, found, limit)
    elif not _same_scalar(actual, expected):
        found.append(f"{json_path(path)}: expected {_show(expected)}, got {_show(actual)}")


def _compare_objects(
    actual: dict[str, Any],
    expected: dict[str, Any],
    path: tuple[PathPart, ...],
    options: _Options,
    found: list[str],
    limit: int,
) -> None:
    for key in expected:
        if _ignored(key, path, options):
            continue
        if key not in actual:
            found.append(f"{json_path((*path, key))}: missing (expected {_show(expected[key])})")
        else:
            _compare(actual[key], expected[key], (*path, key), options, found, limit)
    for key in actual:
        if key not in expected and not _ignored(key, path, options):
            found.append(f"{json_path((*path, key))}: unexpected key (got {_show(actual[key])})")


def _compare_lists(
    actual: list[Any],
    expected: list[Any],
    path: tuple[PathPart, ...],
    options: _Options,
    found: list[str],
    limit: int,
) -> None:
    if len(actual) != len(expected):
        found.append(f"{json_path(path)}: expected {len(expected)} items, got {len(actual)}")
    for index, (left, right) in enumerate(zip(actual, expected)):
        _compare(left, right, (*path, index), options, found, limit)


def _compare_unordered(
    actual: list[Any], expected: list[Any], path: tuple[PathPart, ...], options: _Options, found: list[str]
) -> None:
    left = Counter(_canonical(item, (*path, i), options) for i, item in enumerate(actual))
    right = Counter(_canonical(item, (*path, i), options) for i, item in enumerate(expected))
    if left != right:
        missing, extra = sum((right - left).values()), sum((left - right).values())
        found.append(
            f"{json_path(path)}: lists differ ignoring order ({missing} expected item(s) "
            f"missing, {extra} unexpected)"
        )


def _canonical(value: Any, path: tuple[PathPart, ...], options: _Options) -> str:
    """A text form equal for values that compare equal here (ignored keys dropped)."""
    return json.dumps(_strip(value, path, options), sort_keys=True, default=str)


def _strip(value: Any, path: tuple[PathPart, ...], options: _Options) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v, (*path, k), options) for k, v in value.items() if not _ignored(k, path, options)}
    if isinstance(value, list):
        items = [_strip(item, (*path, index), options) for index, item in enumerate(value)]
        return (
            sorted(items, key=lambda i: json.dumps(i, sort_keys=True, default=str))
            if options.ignore_list_order
            else items
        )
    if isinstance(value, float) and value.is_integer():
        return int(value)  # 1.0 and 1 are one JSON number
    return value


def _same_scalar(actual: Any, expected: Any) -> bool:
    if isinstance(actual, bool) or isinstance(expected, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(actual, (int, float)) and isinstance(expected, (int, float)):
        return actual == expected
    return type(actual) is type(expected) and bool(actual == expected)


def _show(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."
