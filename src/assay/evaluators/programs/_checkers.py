"""Built-in checkers: the candidate's output, as it streams in, against the expected
output, read from its source as far as needed. ``exact`` compares lines (a missing final
newline, CRLF line ends and trailing empty lines aside), ``tokens`` whitespace-separated
tokens, ``case_insensitive`` tokens ignoring ASCII case, ``floats`` tokens where two
numbers may differ by ``abs_tol`` or ``rel_tol``."""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

from assay.evaluators.programs._units import Batch, Units

CHUNK = 1 << 16
SHOWN = 80  # characters of a differing unit in the feedback
BUILT_IN = ("exact", "tokens", "case_insensitive", "floats")
_NUMBER = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")

Equal = Callable[[bytes, bytes], bool]


@dataclass(frozen=True)
class CheckerSpec:
    """A built-in checker by name, with the float tolerances."""

    name: str = "tokens"
    abs_tol: float = 1e-6
    rel_tol: float = 1e-6

    def __post_init__(self) -> None:
        if self.name not in BUILT_IN:
            raise ValueError(
                f"unknown checker {self.name!r}; built in: {', '.join(BUILT_IN)} (or a checker program)"
            )

    def equal(self) -> Equal:
        if self.name == "case_insensitive":
            return lambda a, b: a == b or a.lower() == b.lower()
        if self.name == "floats":
            return lambda a, b: a == b or _close(a, b, self.abs_tol, self.rel_tol)
        return bytes.__eq__


def _close(expected: bytes, actual: bytes, abs_tol: float, rel_tol: float) -> bool:
    if not (_NUMBER.fullmatch(expected) and _NUMBER.fullmatch(actual)):
        return False
    return math.isclose(float(expected), float(actual), rel_tol=rel_tol, abs_tol=abs_tol)


class Comparison:
    """An ``OutputSink`` for the sandbox: feed it the candidate's output; ``verdict()``
    afterwards. It keeps reading (and dropping) once a difference is found, so that the
    program's own end, not a closed pipe, ends it; past ``limit`` bytes it stops."""

    def __init__(self, spec: CheckerSpec, expected: BinaryIO, limit: int) -> None:
        lines = spec.name == "exact"
        self.equal = spec.equal()
        self.plain = spec.name in ("exact", "tokens")  # bytes equality: whole lists at C speed
        self.expected = expected
        self.limit = limit
        self.size = 0
        self.ours = Units(lines)
        self.theirs = Units(lines)
        self.queue: deque[Batch] = deque()  # expected units not yet matched: from offset on
        self.offset = 0
        self.expected_done = False
        self.difference: str | None = None

    def feed(self, data: bytes) -> bool:
        self.size += len(data)
        if self.size > self.limit:
            return False
        if self.difference is None:
            self._compare(self.ours.feed(data))
        return True

    def verdict(self) -> str | None:
        """None if the outputs agree, else where they first differ."""
        if self.difference is None:
            self._compare(self.ours.finish())
        if self.difference is None and self._fill(1):
            batch = self.queue[0]
            unit = batch.units[self.offset]
            self.difference = (
                f"line {batch.line_of(self.offset)}: expected {_show(unit)}, got the end of the output"
            )
        return self.difference

    def _compare(self, batch: Batch) -> None:
        got = batch.units
        wanted = self._take(len(got))
        if (wanted == got) if self.plain else all(map(self.equal, wanted, got)):
            return
        index = next((i for i, (w, g) in enumerate(zip(wanted, got)) if not self.equal(w, g)), len(wanted))
        line = batch.line_of(index)
        if index < len(wanted):
            self.difference = f"line {line}: expected {_show(wanted[index])}, got {_show(got[index])}"
        else:
            self.difference = f"line {line}: expected the end of the output, got {_show(got[index])}"

    def _take(self, count: int) -> list[bytes]:
        """The next ``count`` expected units (fewer at its end)."""
        self._fill(count)
        taken: list[bytes] = []
        while len(taken) < count and self.queue:
            head = self.queue[0]
            part = head.units[self.offset : self.offset + count - len(taken)]
            taken += part
            self.offset += len(part)
            if self.offset >= len(head.units):
                self.queue.popleft()
                self.offset = 0
        return taken

    def _fill(self, count: int) -> bool:
        """Read the expected output until ``count`` units wait (or it ends)."""
        waiting = sum(len(b.units) for b in self.queue) - self.offset
        while waiting < count and not self.expected_done:
            data = self.expected.read(CHUNK)
            batch = self.theirs.feed(data) if data else self.theirs.finish()
            self.expected_done = not data
            if batch.units:
                self.queue.append(batch)
                waiting += len(batch.units)
        return waiting > 0


def _show(unit: bytes) -> str:
    text = unit.decode("utf-8", errors="replace")
    return repr(text if len(text) <= SHOWN else text[:SHOWN] + "...")
