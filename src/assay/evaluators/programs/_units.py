"""Output cut into the units a checker compares, chunk by chunk: lines (``exact``) or
whitespace-separated tokens (the others). Linear in the input and bounded: a unit
longer than ``MAX_UNIT`` is cut into pieces of that size, the same way on both sides,
so equal outputs still give equal pieces and a difference still shows. Each chunk is
split by ``bytes.split`` (C speed); where a unit is on is worked out only for the one
difference a verdict shows."""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_UNIT = 1 << 20
_TOKEN = re.compile(rb"\S+")
_SPACES = (b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c")  # what bytes.split() splits on


@dataclass
class Batch:
    """The units of one piece of output, and where to find each one's line."""

    units: list[bytes]
    text: bytes
    first_line: int
    lines: bool

    def line_of(self, index: int) -> int:
        if self.lines:
            return self.first_line + index
        for number, match in enumerate(_TOKEN.finditer(self.text)):
            if number == index:
                return self.first_line + self.text.count(b"\n", 0, match.start())
        return self.first_line + self.text.count(b"\n")


class Units:
    """``feed`` bytes, then ``finish``; each returns a ``Batch``."""

    def __init__(self, lines: bool) -> None:
        self.lines = lines
        self.buffer = bytearray()
        self.line = 1  # the line the buffer's first byte is on
        self.blank = 0  # (lines) empty lines held back: trailing ones do not count

    def feed(self, data: bytes) -> Batch:
        self.buffer += data
        return self._lines(final=False) if self.lines else self._tokens(final=False)

    def finish(self) -> Batch:
        return self._lines(final=True) if self.lines else self._tokens(final=True)

    def _lines(self, final: bool) -> Batch:
        end = len(self.buffer) if final else self.buffer.rfind(b"\n") + 1
        if end == 0 and len(self.buffer) > MAX_UNIT:  # one very long line: a piece now
            end = MAX_UNIT
        text = bytes(self.buffer[:end])
        del self.buffer[:end]
        first = self.line - self.blank
        units = [b""] * self.blank
        rows = text.split(b"\n")
        if not final or (rows and rows[-1] == b""):
            rows.pop()  # what followed the last newline: nothing, or the start of a line
        if b"\r" in text:
            rows = [row[:-1] if row.endswith(b"\r") else row for row in rows]
        units += _cut(rows)
        self.line += text.count(b"\n")
        self.blank = 0
        while units and units[-1] == b"" and not final:
            units.pop()
            self.blank += 1
        if final:
            while units and units[-1] == b"":
                units.pop()
        return Batch(units, text, first, True)

    def _tokens(self, final: bool) -> Batch:
        buffer = self.buffer
        end = len(buffer)
        if not final:  # a token running to the end may go on in the next chunk
            end = max(buffer.rfind(space) for space in _SPACES) + 1
            if end == 0 and len(buffer) > MAX_UNIT:
                end = MAX_UNIT
        text = bytes(buffer[:end])
        del buffer[:end]
        first = self.line
        self.line += text.count(b"\n")
        return Batch(_cut(text.split()), text, first, False)


def _cut(units: list[bytes]) -> list[bytes]:
    if all(len(unit) <= MAX_UNIT for unit in units):
        return units
    return [unit[i : i + MAX_UNIT] for unit in units for i in range(0, max(1, len(unit)), MAX_UNIT)]
