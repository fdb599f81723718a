"""Which rows a shard runs: the deterministic slice of an experiment's (example, repetition) rows.

Shard ``i`` of ``n`` runs the rows whose index in data order, ``position x repetitions +
repetition``, is ``i`` modulo ``n``. The index is fixed by the experiment: it pins a dataset
version, whose examples have dense positions in one order, so every process (and every
later resume) computes the same slice without talking to the others. Taking rows rather
than whole examples keeps shards within one row of each other even when a few examples
are repeated many times (pass@k over a handful of problems).

Two conventions, one per face, each stated where it is read:

* the command line (``--shard I/N``, and the same text given to ``shard=``) counts from 1,
  as Playwright's and Jest's ``--shard`` do: ``1/3``, ``2/3``, ``3/3``;
* Python's pair ``shard=(i, n)`` counts from 0, as Python indexes do: ``(0, 3)`` is ``1/3``.

Messages name a shard in the command-line form (``shard 1/3``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from assay.errors import ShardError

__all__ = ["Shard", "ShardError", "parse_shard", "shard_argument", "shard_text"]

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
        """The command-line form, counting from 1 (``Shard(0, 3)`` is ``1/3``)."""
        return shard_text(self.index, self.count)


def shard_text(index: int, count: int) -> str:
    """Shard ``index`` (from 0) of ``count`` as the command line writes it: from 1."""
    return f"{index + 1}/{count}"


WHOLE = Shard(0, 1)


def shard_argument(value: Any) -> Shard:
    """``evaluate(shard=...)``: None (the whole experiment), a pair ``(i, n)`` with
    0 <= i < n, or the command line's text ``"I/N"`` with 1 <= I <= N."""
    if value is None:
        return WHOLE
    if isinstance(value, Shard):
        return _checked(value.index, value.count, repr(value))
    if isinstance(value, str):
        return parse_shard(value, "shard=")
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(_is_int(v) for v in value):
        return _checked(value[0], value[1], f"shard={tuple(value)!r}")
    raise ShardError(
        f"shard= takes a pair (index from 0, count) such as (0, 3), or the command line's "
        f"'I/N' (I from 1) such as '1/3'; got {value!r}"
    )


def parse_shard(text: str, flag: str = "--shard") -> Shard:
    """``I/N`` as typed after ``--shard``: shard ``I`` (counting from 1) of ``N``."""
    match = _SPEC.match(text)
    if match is None:
        raise ShardError(f"{flag} {text!r}: write I/N, the shard number from 1 and the shard count, e.g. 1/3")
    number, count = int(match[1]), int(match[2])
    given = f"{flag} {text!r}"
    if count < 1:
        raise ShardError(f"{given}: the shard count must be at least 1")
    if not 1 <= number <= count:
        raise ShardError(
            f"{given}: shards count from 1 (as Playwright's and Jest's --shard do), so I must be "
            f"1 to {count}: {_all_of(count)}"
        )
    return Shard(number - 1, count)


def _all_of(count: int) -> str:
    if count <= 4:
        return ", ".join(shard_text(i, count) for i in range(count))
    return f"{shard_text(0, count)}, {shard_text(1, count)}, ..., {shard_text(count - 1, count)}"


def _checked(index: int, count: int, given: str) -> Shard:
    if count < 1:
        raise ShardError(f"{given}: the shard count must be at least 1")
    if not 0 <= index < count:
        raise ShardError(
            f"{given}: the index of the pair counts from 0 (as Python indexes do), so it must be "
            f"0 to {count - 1}; the command line's --shard I/N counts from 1 ((0, {count}) is "
            f"--shard 1/{count})"
        )
    return Shard(index, count)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
