"""Counts of a finished experiment's filtered rows (and other answers read from a few
finished experiments), kept while their stored figures last.

A filter's count (failing rows, a search) reads every row it might match: seconds at 1M
rows. Every page of the same filter shows the same count, so it is counted once per
(experiment, query) and kept until anything that rewrites the experiment's rows changes
what it stored: its status, its end, its row count or its metric figures (a re-score
rewrites them). A running experiment, or one without final stored figures, is always
counted afresh.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.sql import in_list

__all__ = ["kept_count", "kept_value", "signatures"]

T = TypeVar("T")

_KEPT = 512
_lock = threading.Lock()
_counts: weakref.WeakKeyDictionary[ReadOnlyDatabase, dict[tuple[Any, ...], tuple[tuple[Any, ...], int]]] = (
    weakref.WeakKeyDictionary()
)

_SIGNATURE_OF = (
    "SELECT x.id, x.status, x.finished_at, s.row_count, s.final, COUNT(m.key), SUM(m.n), "
    "SUM(m.errors), SUM(m.unscored), SUM(m.skipped), SUM(m.mean) FROM experiments x "
    "LEFT JOIN experiment_stats s ON s.experiment_id = x.id "
    "LEFT JOIN metric_stats m ON m.experiment_id = x.id WHERE x.id IN {} "
    "GROUP BY x.id, x.status, x.finished_at, s.row_count, s.final"
)


def signature(db: ReadOnlyDatabase, experiment_id: str) -> tuple[Any, ...] | None:
    """What changes when the experiment's rows may have; None while it may still change."""
    return signatures(db, [experiment_id])[experiment_id]


def signatures(db: ReadOnlyDatabase, experiment_ids: list[str]) -> dict[str, tuple[Any, ...] | None]:
    """``signature`` of each experiment, read in one query."""
    if not experiment_ids:
        return {}
    marks, params = in_list(experiment_ids)
    found = {row[0]: tuple(row)[1:] for row in db.query(_SIGNATURE_OF.format(marks), params)}
    return {i: _standing(found.get(i)) for i in experiment_ids}


def _standing(row: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
    """The row, unless the experiment runs or has no final stored figures (may change)."""
    return None if row is None or row[0] == "running" or not row[3] else row


_values: weakref.WeakKeyDictionary[ReadOnlyDatabase, dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]]] = (
    weakref.WeakKeyDictionary()
)


def kept_value(
    db: ReadOnlyDatabase,
    what: tuple[Any, ...],
    standing: tuple[tuple[Any, ...] | None, ...],
    compute: Callable[[], T],
) -> T:
    """``compute()``, or what it gave for ``what`` while the experiments it reads stood
    still (``standing``: their ``signatures``; a None, one still changing, is never kept)."""
    with _lock:
        cached = _values.setdefault(db, {}).get(what)
    if cached is not None and cached[0] == standing and None not in standing:
        value: T = cached[1]
        return value
    value = compute()
    if None not in standing:
        with _lock:
            known = _values.setdefault(db, {})
            if len(known) >= _KEPT:
                known.pop(next(iter(known)))
            known[what] = (standing, value)
    return value


def kept_count(
    db: ReadOnlyDatabase, experiment_id: str, what: tuple[Any, ...], count: Callable[[], int]
) -> int:
    """``count()``, or the answer it gave for ``what`` while the experiment stood still."""
    current = signature(db, experiment_id)
    wanted = (experiment_id, *what)
    with _lock:
        cached = _counts.setdefault(db, {}).get(wanted)
    if current is not None and cached is not None and cached[0] == current:
        return cached[1]
    counted = count()
    if current is not None:
        with _lock:
            known = _counts.setdefault(db, {})
            if len(known) >= _KEPT:
                known.pop(next(iter(known)))
            known[wanted] = (current, counted)
    return counted
