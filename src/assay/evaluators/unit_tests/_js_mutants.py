"""Mutants of a JavaScript module, made on its tokens (no parser): one token changed each.

A small scanner walks the source once, stepping over comments, string and template
literals and regular-expression literals (a ``/`` where a value cannot end is one), and
yields the operator, keyword and number tokens. These are changed, one per mutant:

===========  ===========================================================================
arithmetic   ``+`` <-> ``-``, ``*`` <-> ``/``, ``%`` -> ``*`` (and ``+=`` <-> ``-=``,
             ``*=`` <-> ``/=``)
comparison   ``<`` <-> ``<=``, ``>`` <-> ``>=``, ``===`` <-> ``!==``, ``==`` <-> ``!=``
boolean      ``&&`` <-> ``||``; ``true`` <-> ``false``
constant     a decimal integer ``n`` -> ``n + 1``
===========  ===========================================================================

What it does not do, being token-based: it has no types (a ``+`` joining strings becomes
a ``-`` that yields NaN), it does not mutate inside template literals' ``${...}``, and it
cannot tell that a mutant is equivalent. A mutant that no longer parses is found in the
sandbox (``node --check``) and left out of the score, not counted as killed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

from assay.evaluators.unit_tests._mutants import Mutant

SWAPS = {
    "+": ("-", "arithmetic"),
    "-": ("+", "arithmetic"),
    "*": ("/", "arithmetic"),
    "/": ("*", "arithmetic"),
    "%": ("*", "arithmetic"),
    "+=": ("-=", "arithmetic"),
    "-=": ("+=", "arithmetic"),
    "*=": ("/=", "arithmetic"),
    "/=": ("*=", "arithmetic"),
    "<": ("<=", "comparison"),
    "<=": ("<", "comparison"),
    ">": (">=", "comparison"),
    ">=": (">", "comparison"),
    "===": ("!==", "comparison"),
    "!==": ("===", "comparison"),
    "==": ("!=", "comparison"),
    "!=": ("==", "comparison"),
    "&&": ("||", "boolean"),
    "||": ("&&", "boolean"),
    "true": ("false", "constant"),
    "false": ("true", "constant"),
}
# longest first, so that ``===`` is one token and never ``==`` then ``=``
PUNCTUATORS = sorted(
    "{ } ( ) [ ] ; , ~ ? : . ... => = == === != !== ! < <= << <<= > >= >> >>= >>> >>>= + += ++ - -= -- "
    "* *= ** **= / /= % %= & &= && &&= | |= || ||= ^ ^= ?? ??= ?.".split(),
    key=len,
    reverse=True,
)
WORD = re.compile(r"[A-Za-z_$][\w$]*")
NUMBER = re.compile(r"0[xXoObB][\da-fA-F_]+n?|\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?n?|\.\d+(?:[eE][+-]?\d+)?")
DECIMAL_INTEGER = re.compile(r"\d+")
# after these a ``/`` starts a regular expression, not a division
REGEX_AFTER_WORDS = {"return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield", "await"}  # fmt: skip


def js_mutants(source: str, limit: int, seed: int = 0) -> tuple[list[Mutant], int]:
    """Up to ``limit`` mutants, and how many candidates there were."""
    edits = list(_edits(source))
    total = len(edits)
    if total > limit:
        edits = [edits[i] for i in sorted(random.Random(seed).sample(range(total), limit))]
    made = []
    for index, (start, original, replacement, operator) in enumerate(edits):
        mutated = source[:start] + replacement + source[start + len(original) :]
        line = source.count("\n", 0, start) + 1
        made.append(Mutant(index, operator, line, f"{original!r} -> {replacement!r}", mutated))
    return made, total


def _edits(source: str) -> Iterator[tuple[int, str, str, str]]:
    for start, token in _tokens(source):
        if token in SWAPS:
            replacement, operator = SWAPS[token]
            yield start, token, replacement, operator
        elif DECIMAL_INTEGER.fullmatch(token):
            yield start, token, str(int(token) + 1), "constant"


def _tokens(source: str) -> Iterator[tuple[int, str]]:
    """(offset, text) of each operator, word and number outside comments, strings and
    regular expressions. Linear: each step consumes at least one character."""
    i, size, value_ended = 0, len(source), False
    while i < size:
        char = source[i]
        if char.isspace():
            i += 1
        elif source.startswith("//", i):
            i = _end_of(source, "\n", i + 2)
        elif source.startswith("/*", i):
            i = _end_of(source, "*/", i + 2)
        elif char in "'\"`":
            i, value_ended = _skip_quoted(source, i, char), True
        elif char == "/" and not value_ended:
            i, value_ended = _skip_regex(source, i), True
        elif (found := WORD.match(source, i)) is not None:
            word = found.group()
            yield i, word
            i, value_ended = found.end(), word not in REGEX_AFTER_WORDS
        elif (found := NUMBER.match(source, i)) is not None:
            yield i, found.group()
            i, value_ended = found.end(), True
        else:
            token = next((p for p in PUNCTUATORS if source.startswith(p, i)), char)
            yield i, token
            i, value_ended = i + len(token), token in (")", "]", "}", "++", "--")


def _end_of(source: str, closing: str, start: int) -> int:
    found = source.find(closing, start)
    return len(source) if found < 0 else found + len(closing)


def _skip_quoted(source: str, start: int, quote: str) -> int:
    """Past a string or template literal (a template's ``${...}`` is skipped whole)."""
    i = start + 1
    while i < len(source):
        if source[i] == "\\":
            i += 2
        elif source[i] == quote:
            return i + 1
        elif quote != "`" and source[i] == "\n":
            return i  # an unterminated string ends at its line
        else:
            i += 1
    return len(source)


def _skip_regex(source: str, start: int) -> int:
    """Past ``/.../flags`` (a ``/`` inside a ``[...]`` class does not end it)."""
    i, in_class = start + 1, False
    while i < len(source) and source[i] != "\n":
        char = source[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "/" and not in_class:
            found = WORD.match(source, i + 1)
            return found.end() if found else i + 1
        i += 1
    return i
