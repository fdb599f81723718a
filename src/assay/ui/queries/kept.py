"""Counts of a finished experiment's filtered rows, kept while its stored figures last.

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
from typing import Any

from assay.store.read.database import ReadOnlyDatabase

__all__ = ["kept_count"]

_KEPT = 512
_lock = threading.Lock()
_counts: weakref.WeakKeyDictionary[ReadOnlyDatabase, dict[tuple[Any, ...], tuple[tuple[Any, ...], int]]] = (
    weakref.WeakKeyDictionary()
)

_SIGNATURE = (
    "SELECT x.status, x.finished_at, s.row_count, s.final, COUNT(m.key), SUM(m.n), SUM(m.errors), "
    "SUM(m.unscored), SUM(m.skipped), SUM(m.mean) FROM experiments x "
    "LEFT JOIN experiment_stats s ON s.experiment_id = x.id "
    "LEFT JOIN metric_stats m ON m.experiment_id = x.id WHERE x.id = ? "
    "GROUP BY x.status, x.finished_at, s.row_count, s.final"
)


def signature(db: ReadOnlyDatabase, experiment_id: str) -> tuple[Any, ...] | None:
    """What changes when the experiment's rows may have; None while it may still change."""
    row = db.query_one(_SIGNATURE, (experiment_id,))
    if row is None or row[0] == "running" or not row[3]:
        return None
    return tuple(row)


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
