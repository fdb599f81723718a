"""A side-by-side diff of two texts: by line for code and other multi-line text, by word
for prose. Inputs are cut to a bound first, so a diff's cost never grows with a model's
longest output."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

__all__ = ["MAX_DIFF_CHARS", "Diff", "Piece", "Side", "as_diff_text", "side_by_side"]

MAX_DIFF_CHARS = 20_000
MAX_DIFF_LINES = 500
MAX_DIFF_WORDS = 1_000  # the matcher is quadratic in its units at worst: bound them
_WORDS = re.compile(r"\s*(?:\w+|[^\w\s])\s*|\s+")  # a word with the spaces around it

Change = Literal["same", "removed", "added"]


@dataclass(frozen=True)
class Piece:
    text: str
    change: Change


@dataclass
class Side:
    """One line (line diff) or the whole text (word diff) of one side, in pieces."""

    pieces: list[Piece] = field(default_factory=list)
    number: int | None = None


@dataclass
class Diff:
    mode: Literal["line", "word"]
    rows: list[tuple[Side, Side]]
    truncated: bool = False
    same: bool = False


def as_diff_text(value: Any) -> str:
    """A value as the text a diff compares: a one-text mapping as its text, else JSON."""
    if isinstance(value, dict) and len(value) == 1 and isinstance(next(iter(value.values())), str):
        return str(next(iter(value.values())))
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()


def side_by_side(left: str, right: str) -> Diff:
    truncated = len(left) > MAX_DIFF_CHARS or len(right) > MAX_DIFF_CHARS
    left, right = left[:MAX_DIFF_CHARS], right[:MAX_DIFF_CHARS]
    if "\n" in left.strip() or "\n" in right.strip():
        diff = _by_line(left, right)
    else:
        diff = _by_word(left, right)
    diff.truncated = truncated or diff.truncated
    diff.same = left == right
    return diff


def _by_word(left: str, right: str) -> Diff:
    a, b = _WORDS.findall(left), _WORDS.findall(right)
    truncated = len(a) > MAX_DIFF_WORDS or len(b) > MAX_DIFF_WORDS
    a, b = a[:MAX_DIFF_WORDS], b[:MAX_DIFF_WORDS]
    old, new = Side(), Side()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if tag == "equal":
            old.pieces.append(Piece("".join(a[i1:i2]), "same"))
            new.pieces.append(Piece("".join(b[j1:j2]), "same"))
            continue
        if i2 > i1:
            old.pieces.append(Piece("".join(a[i1:i2]), "removed"))
        if j2 > j1:
            new.pieces.append(Piece("".join(b[j1:j2]), "added"))
    return Diff("word", [(old, new)], truncated)


def _by_line(left: str, right: str) -> Diff:
    a, b = left.splitlines(), right.splitlines()
    truncated = len(a) > MAX_DIFF_LINES or len(b) > MAX_DIFF_LINES
    a, b = a[:MAX_DIFF_LINES], b[:MAX_DIFF_LINES]
    rows: list[tuple[Side, Side]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            rows += [
                (_line(a[i], "same", i), _line(b[j], "same", j))
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
            ]
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            old = _line(a[i], "removed", i) if i < i2 else Side()
            new = _line(b[j], "added", j) if j < j2 else Side()
            rows.append((old, new))
    return Diff("line", rows, truncated)


def _line(text: str, change: Change, index: int) -> Side:
    return Side([Piece(text, change)], index + 1)
