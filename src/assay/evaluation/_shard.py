"""Which rows a shard runs: the deterministic slice of an experiment's (example, repetition) rows.

Shard ``i`` of ``n`` runs the rows whose index in data order, ``position x repetitions +
repetition``, is ``i`` modulo ``n``. The index is fixed by the experiment: it pins a dataset
version, whose examples have dense positions in one order, so every process (and every
later resume) computes the same slice without talking to the others. Taking rows rather
than whole examples keeps shards within one row of each other even when a few examples
are repeated many times (pass@k over a handful of problems).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from assay.errors import ShardError

__all__ = ["Shard", "ShardError", "parse_shard", "shard_argument"]

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    index: int
    count: int

    def holds(self, row_index: int) -> bool:
        return row_index % self.count == self.index

    def rows_of(self, total: int) -> int:
        """How many of ``total`` rows (indices 0..total-1) belong to this shard."""
        return len(range(self.index, total, self.count))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


WHOLE = Shard(0, 1)


def shard_argument(value: Any) -> Shard:
    """``evaluate(shard=...)``: None (the whole experiment) or a pair ``(i, n)``, 0 <= i < n."""
    if value is None:
        return WHOLE
    if isinstance(value, Shard):
        return _checked(value.index, value.count, repr(value))
    if isinstance(value, str):
        return parse_shard(value, "shard=")
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(_is_int(v) for v in value):
        return _checked(value[0], value[1], f"shard={tuple(value)!r}")
    raise ShardError(f"shard= takes a pair (index, count) such as (0, 3), or 'I/N'; got {value!r}")


def parse_shard(text: str, flag: str = "--shard") -> Shard:
    """``I/N`` as typed after ``--shard``: the 0-based shard index and the shard count."""
    match = _SPEC.match(text)
    if match is None:
        raise ShardError(f"{flag} {text!r}: write I/N, the 0-based shard index and the shard count, e.g. 0/3")
    return _checked(int(match[1]), int(match[2]), f"{flag} {text!r}")


def _checked(index: int, count: int, given: str) -> Shard:
    if count < 1:
        raise ShardError(f"{given}: the shard count must be at least 1")
    if not 0 <= index < count:
        raise ShardError(f"{given}: the shard index counts from 0, so it must be 0 to {count - 1}")
    return Shard(index, count)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
