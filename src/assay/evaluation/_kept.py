"""The rows of a run, kept as it produced them, so that a run that computed every row of
its experiment hands them over (to ``list(results)``, and as the per-row values summary
evaluators take) without reading them back from the store.

Only within a budget: past ``max_rows`` rows or about ``max_bytes``, what was kept is
dropped and the rows are read back a page at a time (``_paged``), so a million-row run
holds no more than a small one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from assay.evaluation._binding import SummaryEvaluator
from assay.store.records import ExperimentRow

__all__ = ["KEPT_FIELDS", "KeptRows"]

KEPT_FIELDS = ("inputs", "outputs", "reference_outputs")
MAX_ROWS = 50_000
MAX_BYTES = 128 * 2**20
ROW_BYTES = 4096  # a row's records (run, example, results, ids, times) before its values
RESULT_BYTES = 600
_SAMPLE_EVERY = 32  # sizes are estimated from one row in 32: a budget, not an account


class KeptRows:
    """Every row added, handed over in (position, repetition) order.

    Kept in the order rows arrive (data order when one thread ran them, so that handing
    them over copies nothing). ``add`` may be called from any row thread. Once over
    budget, what was kept is dropped for good.
    """

    def __init__(self, *, max_rows: int | None = None, max_bytes: int | None = None) -> None:
        self._max_rows = MAX_ROWS if max_rows is None else max_rows
        self._max_bytes = MAX_BYTES if max_bytes is None else max_bytes
        self._rows: list[ExperimentRow] | None = []
        self._lock = threading.Lock()
        self._bytes = 0
        self._ordered: list[ExperimentRow] | None = None
        self._values: dict[str, list[Any]] = {}

    def add(self, row: ExperimentRow) -> None:
        with self._lock:
            rows = self._rows
            if rows is None:
                return
            rows.append(row)
            if len(rows) % _SAMPLE_EVERY == 0:
                self._bytes += _SAMPLE_EVERY * _row_size(row)
                if len(rows) > self._max_rows or self._bytes > self._max_bytes:
                    self._rows = None

    def rows(self, stored_rows: int) -> list[ExperimentRow] | None:
        """The rows in data order; None unless every one of the experiment's
        ``stored_rows`` rows was added (and kept)."""
        with self._lock:
            rows = self._rows
            if rows is None or len(rows) != stored_rows:
                return None
            if self._ordered is None or len(self._ordered) != len(rows):
                self._ordered = _in_data_order(rows)
            return self._ordered

    def lists(self, stored_rows: int, fields: Iterable[str] = KEPT_FIELDS) -> dict[str, list[Any]]:
        """Per field of ``fields``, the values in data order (a missing value is an empty
        dict, as the store gives it back); empty unless every row was kept."""
        rows = self.rows(stored_rows)
        if rows is None:
            return {}
        for field in set(fields) - set(self._values):
            value = _VALUE_OF[field]
            self._values[field] = [value(row) for row in rows]
        return {field: self._values[field] for field in fields}


def wanted_fields(summaries: Sequence[SummaryEvaluator]) -> set[str]:
    """The kept fields ``summaries`` take."""
    wanted: set[str] = set()
    for summary in summaries:
        wanted.update(KEPT_FIELDS if summary.binder.pass_all else summary.binder.names)
    return wanted & set(KEPT_FIELDS)


_VALUE_OF: dict[str, Callable[[ExperimentRow], Any]] = {
    "inputs": lambda row: row.example.inputs or {},
    "outputs": lambda row: row.run.outputs or {},
    "reference_outputs": lambda row: row.example.outputs or {},
}


def _in_data_order(rows: list[ExperimentRow]) -> list[ExperimentRow]:
    keys = [(row.position, row.repetition) for row in rows]
    if all(a < b for a, b in zip(keys, keys[1:])):
        return rows  # one thread ran them: no copy
    return sorted(rows, key=lambda row: (row.position, row.repetition))


def _row_size(row: ExperimentRow) -> int:
    values = (row.run.inputs, row.run.outputs, row.example.outputs, row.run.error)
    return ROW_BYTES + RESULT_BYTES * len(row.results) + sum(_approximate_size(v) for v in values)


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
