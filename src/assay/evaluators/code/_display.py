"""Showing candidate values to people and to the store without ever failing on them.

A candidate's value is plain data but can still break naive code: ``str()`` of an int
with more than 4,300 digits raises, ``json.dumps`` turns ``{1: 2}`` into ``{"1": 2}``
and NaN into ``NaN``. ``show`` is a faithful, bounded ``repr``; ``bounded`` keeps a
value as it is unless it is huge.
"""

from __future__ import annotations

import itertools
import math
import reprlib
from typing import Any

from assay.store.codec import dumps

COMMENT_VALUE_CHARS = 300
STORED_VALUE_CHARS = 10_000
_REPR_DIGITS = 1000


class _Shown(reprlib.Repr):
    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 8
        self.maxlist = self.maxtuple = self.maxset = self.maxfrozenset = self.maxdict = 40
        self.maxstring = self.maxother = COMMENT_VALUE_CHARS
        self.maxlong = 60

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > _REPR_DIGITS * 3:  # beyond what int-to-text conversion allows
            digits = int(x.bit_length() * math.log10(2)) + 1
            return f"<int of about {digits} digits>"
        return super().repr_int(x, level)


_shown = _Shown()


def show(value: Any) -> str:
    """A Python-literal view of ``value``, at most a few hundred characters."""
    try:
        text = _shown.repr(value)
    except Exception:  # noqa: BLE001 - never fail on display
        text = f"<{type(value).__name__} that cannot be shown>"
    if len(text) > COMMENT_VALUE_CHARS:
        text = text[:COMMENT_VALUE_CHARS] + "..."
    return text


def bounded(value: Any) -> Any:
    """The value as it is, unless huge: then a truncated text, so one result cannot
    bloat the store (the comparison already used the whole value)."""
    if not _larger_than(value, STORED_VALUE_CHARS):
        return value
    if _larger_than(value, STORED_VALUE_CHARS * 10):
        return f"<{type(value).__name__} of over {STORED_VALUE_CHARS * 10} characters, truncated> " + show(
            value
        )
    size = len(dumps(value) or "")
    if size <= STORED_VALUE_CHARS:
        return value
    return f"<{type(value).__name__}, {size} characters when stored, truncated> " + show(value)


def _larger_than(value: Any, limit: int) -> bool:
    """Whether ``value`` stored as JSON would roughly exceed ``limit`` characters; stops
    as soon as it does (encoding a million items just to learn that costs ~250 MB)."""
    size, stack = 0, [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind in (str, bytes, bytearray):
            size += len(item) + 2
        elif kind is int:
            size += item.bit_length() // 3 + 1
        elif kind in (list, tuple, set, frozenset):
            size += 2 + len(item)
            stack.extend(itertools.islice(item, limit))
        elif kind is dict:
            size += 2 + 2 * len(item)
            stack.extend(itertools.islice(item.keys(), limit))
            stack.extend(itertools.islice(item.values(), limit))
        else:
            size += 8
        if size > limit:
            return True
    return False
