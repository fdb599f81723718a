"""The per-row values summary evaluators take (``inputs``, ``outputs``,
``reference_outputs``), kept as a run's rows finish, so that a run that computed every
row of its experiment hands them over without reading its rows back from the store.

Only within a budget: past ``max_rows`` rows or about ``max_bytes`` of values, what was
kept is dropped and the summary evaluators read the rows back a page at a time
(``_paged.summary_arguments``), so a million-row run holds no more than a small one.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

from assay.evaluation._binding import SummaryEvaluator
from assay.store.records import ExperimentRow

__all__ = ["KEPT_FIELDS", "KeptValues"]

KEPT_FIELDS = ("inputs", "outputs", "reference_outputs")
MAX_ROWS = 100_000
MAX_BYTES = 64 * 2**20
_SAMPLE_EVERY = 32  # sizes are estimated from one row in 32: a budget, not an account


class KeptValues:
    """The values of ``fields`` of every row added, handed over in (position, repetition)
    order.

    Kept a column per field, in the order rows arrive (data order when one thread ran
    them, so that handing them over copies nothing). ``add`` may be called from any row
    thread. Once over budget, what was kept is dropped for good.
    """

    def __init__(
        self, fields: Iterable[str], *, max_rows: int = MAX_ROWS, max_bytes: int = MAX_BYTES
    ) -> None:
        self.fields = tuple(field for field in KEPT_FIELDS if field in set(fields))
        self._max_rows = max_rows
        self._max_bytes = max_bytes
        self._keys: list[tuple[int, int]] | None = []
        self._columns: list[list[Any]] = [[] for _ in self.fields]
        self._lock = threading.Lock()
        self._bytes = 0

    @classmethod
    def for_summaries(cls, summaries: Sequence[SummaryEvaluator]) -> KeptValues | None:
        """What ``summaries`` take of the kept fields; None when they take none."""
        wanted: set[str] = set()
        for summary in summaries:
            wanted.update(KEPT_FIELDS if summary.binder.pass_all else summary.binder.names)
        kept = cls(wanted)
        return kept if kept.fields else None

    def add(self, row: ExperimentRow) -> None:
        if self._keys is None:
            return
        values = [self._value(row, field) for field in self.fields]
        with self._lock:
            keys = self._keys
            if keys is None:
                return
            keys.append((row.position, row.repetition))
            for column, value in zip(self._columns, values):
                column.append(value)
            if len(keys) % _SAMPLE_EVERY == 0:
                self._bytes += _SAMPLE_EVERY * sum(_approximate_size(value) for value in values)
                if len(keys) > self._max_rows or self._bytes > self._max_bytes:
                    self._keys, self._columns = None, []

    @staticmethod
    def _value(row: ExperimentRow, field: str) -> Any:
        # as the store gives them back: a missing value is an empty dict
        if field == "outputs":
            return row.run.outputs or {}
        if field == "inputs":
            return row.example.inputs or {}
        return row.example.outputs or {}

    def lists(self, stored_rows: int) -> dict[str, list[Any]]:
        """Per field, the values in data order; empty unless every one of the experiment's
        ``stored_rows`` rows was added (and kept)."""
        with self._lock:
            keys, columns = self._keys, self._columns
        if keys is None or len(keys) != stored_rows:
            return {}
        ordered = sorted(keys)
        if keys != ordered:  # rows of several threads: put them in data order
            place = {key: index for index, key in enumerate(keys)}
            order = [place[key] for key in ordered]
            columns = [[column[index] for index in order] for column in columns]
        return dict(zip(self.fields, columns))


def _approximate_size(value: Any, depth: int = 0) -> int:
    """Roughly the bytes ``value`` holds: its strings' lengths and a word per scalar, two
    levels down (deeper containers count by their length)."""
    if isinstance(value, (str, bytes)):
        return 56 + len(value)
    if isinstance(value, dict):
        if depth >= 2:
            return 64 + 100 * len(value)
        return 64 + sum(
            _approximate_size(k, depth + 1) + _approximate_size(v, depth + 1) for k, v in value.items()
        )
    if isinstance(value, (list, tuple, set, frozenset)):
        if depth >= 2:
            return 56 + 100 * len(value)
        return 56 + sum(_approximate_size(item, depth + 1) for item in value)
    return 32
