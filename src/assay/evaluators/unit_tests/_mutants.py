"""Mutants of a Python module: one small change each, made in the source text.

The operator set follows mutmut's classic operators. Each mutant changes one token (or
one literal, or one returned expression) in place, so every other line, comment and
column of the reference stays as it was:

===========  ===========================================================================
arithmetic   ``+`` <-> ``-``, ``*`` <-> ``/``, ``//`` -> ``/``, ``%`` -> ``*``,
             ``**`` -> ``*``, ``&`` <-> ``|``, ``^`` -> ``&``, ``<<`` <-> ``>>``
             (the same in augmented assignments: ``+=`` -> ``-=``...)
comparison   ``<`` <-> ``<=``, ``>`` <-> ``>=``, ``==`` <-> ``!=``, ``is`` <-> ``is not``,
             ``in`` <-> ``not in``
boolean      ``and`` <-> ``or``; ``not x`` -> ``x``
unary        ``-x`` -> ``x``
constant     an int ``n`` -> ``n + 1``; a float ``x`` -> ``x + 1.0``; ``True`` <-> ``False``;
             a string ``"s"`` -> ``"XXsXX"`` (docstrings are left alone)
statement    ``return x`` -> ``return None``; ``break`` <-> ``continue``
===========  ===========================================================================

Candidates are listed in source order; when there are more than asked for, a sample is
drawn with ``random.Random(seed)``, so the same seed gives the same mutants.
"""

from __future__ import annotations

import ast
import io
import random
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass

from assay.errors import EvaluatorInputError

Position = tuple[int, int]  # (line from 1, column in characters)

BINARY = {
    ast.Add: "-",
    ast.Sub: "+",
    ast.Mult: "/",
    ast.Div: "*",
    ast.FloorDiv: "/",
    ast.Mod: "*",
    ast.Pow: "*",
    ast.BitAnd: "|",
    ast.BitOr: "&",
    ast.BitXor: "&",
    ast.LShift: ">>",
    ast.RShift: "<<",
}
SYMBOLS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
}
COMPARE = {
    "<": "<=",
    "<=": "<",
    ">": ">=",
    ">=": ">",
    "==": "!=",
    "!=": "==",
    "is": "is not",
    "is not": "is",
    "in": "not in",
    "not in": "in",
}


@dataclass(frozen=True)
class Mutant:
    index: int
    operator: str
    line: int
    description: str
    source: str

    def shown(self) -> dict[str, object]:
        return {"index": self.index, "operator": self.operator, "line": self.line, "change": self.description}


@dataclass(frozen=True)
class _Edit:
    start: Position
    end: Position
    replacement: str
    operator: str
    original: str


def mutants(source: str, limit: int, seed: int = 0) -> tuple[list[Mutant], int]:
    """Up to ``limit`` mutants, and how many candidates there were."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise EvaluatorInputError(f"the reference does not parse: line {exc.lineno}: {exc.msg}") from None
    text = _Text(source)
    edits = sorted(set(_edits(tree, text)), key=lambda e: (e.start, e.end, e.replacement))
    made = []
    for edit in edits:
        mutated = text.apply(edit)
        if mutated != source and _parses(mutated):
            made.append((edit, mutated))
    total = len(made)
    if total > limit:
        chosen = sorted(random.Random(seed).sample(range(total), limit))
        made = [made[i] for i in chosen]
    return [
        Mutant(index, edit.operator, edit.start[0], f"{edit.original!r} -> {edit.replacement!r}", mutated)
        for index, (edit, mutated) in enumerate(made)
    ], total


def _parses(source: str) -> bool:
    try:
        compile(source, "<mutant>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


class _Text:
    """The source as lines, with AST byte offsets turned into character columns."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = source.splitlines(keepends=True)
        self.tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(source).readline)
            if t.type in (tokenize.OP, tokenize.NAME)
        ]

    def column(self, line: int, byte_offset: int) -> int:
        raw = self.lines[line - 1].encode()[:byte_offset]
        return len(raw.decode(errors="replace"))

    def start(self, node: ast.AST) -> Position:
        return node.lineno, self.column(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> Position:
        line = node.end_lineno  # type: ignore[attr-defined]
        return line, self.column(line, node.end_col_offset)  # type: ignore[attr-defined]

    def tokens_between(self, after: Position, before: Position) -> list[tokenize.TokenInfo]:
        return [t for t in self.tokens if after <= t.start and t.end <= before]

    def segment(self, start: Position, end: Position) -> str:
        if start[0] == end[0]:
            return self.lines[start[0] - 1][start[1] : end[1]]
        parts = [self.lines[start[0] - 1][start[1] :]]
        parts += self.lines[start[0] : end[0] - 1]
        parts.append(self.lines[end[0] - 1][: end[1]])
        return "".join(parts)

    def apply(self, edit: _Edit) -> str:
        offsets = [0]
        for line in self.lines:
            offsets.append(offsets[-1] + len(line))
        begin = offsets[edit.start[0] - 1] + edit.start[1]
        finish = offsets[edit.end[0] - 1] + edit.end[1]
        return self.source[:begin] + edit.replacement + self.source[finish:]


def _edits(tree: ast.AST, text: _Text) -> Iterator[_Edit]:
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            yield from _operator_token(
                text, node.left, node.right, SYMBOLS[type(node.op)], BINARY[type(node.op)], "arithmetic"
            )
        elif isinstance(node, ast.AugAssign):
            symbol = SYMBOLS[type(node.op)] + "="
            yield from _operator_token(
                text, node.target, node.value, symbol, BINARY[type(node.op)] + "=", "arithmetic"
            )
        elif isinstance(node, ast.Compare):
            yield from _compare(text, node)
        elif isinstance(node, ast.BoolOp):
            word = "and" if isinstance(node.op, ast.And) else "or"
            for left, right in zip(node.values, node.values[1:]):
                yield from _operator_token(
                    text, left, right, word, "or" if word == "and" else "and", "boolean"
                )
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
            start, operand = text.start(node), text.start(node.operand)
            kind = "boolean" if isinstance(node.op, ast.Not) else "unary"
            yield _Edit(start, operand, "", kind, text.segment(start, operand))
        elif isinstance(node, ast.Constant) and id(node) not in docstrings:
            edit = _constant(text, node)
            if edit is not None:
                yield edit
        elif isinstance(node, ast.Return) and node.value is not None:
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                start, end = text.start(node.value), text.end(node.value)
                yield _Edit(start, end, "None", "statement", text.segment(start, end))
        elif isinstance(node, (ast.Break, ast.Continue)):
            word = "continue" if isinstance(node, ast.Break) else "break"
            yield _Edit(
                text.start(node),
                text.end(node),
                word,
                "statement",
                text.segment(text.start(node), text.end(node)),
            )


def _operator_token(
    text: _Text, left: ast.AST, right: ast.AST, symbol: str, replacement: str, operator: str
) -> Iterator[_Edit]:
    words = symbol.split()
    found = [t for t in text.tokens_between(text.end(left), text.start(right)) if t.string == words[0]]
    if found:
        token = found[0]
        yield _Edit(token.start, token.end, replacement, operator, token.string)


def _compare(text: _Text, node: ast.Compare) -> Iterator[_Edit]:
    operands = [node.left, *node.comparators]
    for index, _ in enumerate(node.ops):
        between = text.tokens_between(text.end(operands[index]), text.start(operands[index + 1]))
        words = [t for t in between if t.string not in ("(", ")")]
        if not words:
            continue
        symbol = " ".join(t.string for t in words)
        if symbol in COMPARE:
            yield _Edit(words[0].start, words[-1].end, COMPARE[symbol], "comparison", symbol)


def _constant(text: _Text, node: ast.Constant) -> _Edit | None:
    value = node.value
    start, end = text.start(node), text.end(node)
    original = text.segment(start, end)
    if isinstance(value, bool):
        return _Edit(start, end, str(not value), "constant", original)
    if isinstance(value, int):
        return _Edit(start, end, repr(value + 1), "constant", original)
    if isinstance(value, float):
        return _Edit(start, end, repr(value + 1.0), "constant", original)
    if isinstance(value, str) and start[0] == end[0]:
        return _Edit(start, end, repr("XX" + value + "XX"), "constant", original)
    return None


def _docstrings(tree: ast.AST) -> set[int]:
    """Constants left alone: docstrings, and the parts of f-strings (one token)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            found.update(id(part) for part in ast.walk(node))
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                found.add(id(body[0].value))
    return found
