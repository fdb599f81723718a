"""A metric's rows in score order, read from the ``results_by_rank`` index.

The index holds, per (experiment, metric), each result's score (none when the result
errored), then its row's position and repetition. When every row of the experiment holds
exactly one result of the metric (``one_result_per_row``), its entries are the rows, and
a sorted page is a range of the index read in order: the scored rows by score, ties in
data order, then the rows without a score (errored, skipped, unscored) in data order, in
both directions. A "metric below / above a value" filter is a range of the same index.
Otherwise the caller falls back to a query per row.

Descending order with ties ascending is not an order any index walk gives (walked
backwards, ties come last row first), so a descending page is read in at most five
index range queries: the score at the page's offset, how many rows score above it, that
score's rows from the right one in data order, then the next scores walked backwards,
whose complete tie groups are turned around and whose last, cut, group is read forwards.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from assay.store import _columns as columns
from assay.ui.db import ReadOnlyDatabase

__all__ = ["RANK", "Bound", "count", "one_result_per_row", "ordered_run_ids"]

# The index's score column, written as the index writes it (the planner matches the text).
RANK = "CASE WHEN r.error IS NULL THEN r.score END"


@dataclass(frozen=True)
class Bound:
    """Scores strictly below (``<``) or above (``>``) ``value``."""

    op: str
    value: float


def one_result_per_row(db: ReadOnlyDatabase, experiment_id: str, key: str) -> bool:
    """Whether every row of the experiment holds exactly one result of ``key``: as many
    results as rows, on as many distinct (example, repetition) pairs (a run's key).

    A walk of the metric's index entries (a fraction of a second at 1M rows), so the
    answer is kept for a finished experiment until anything that rewrites its results
    changes: its status, its end, or its stored figures (re-scoring rewrites them).
    An experiment with stored metric columns has the fact stored with them (no walk)."""
    stored = columns.one_result_per_row(db.conn, experiment_id, key)
    if stored is not None:
        return stored
    signature = _signature(db, experiment_id, key)
    with _lock:
        cached = _verdicts.setdefault(db, {}).get((experiment_id, key))
    if signature is not None and cached is not None and cached[0] == signature:
        return cached[1]
    verdict = _counted(db, experiment_id, key, None if signature is None else int(signature[2]))
    if signature is not None:
        with _lock:
            known = _verdicts.setdefault(db, {})
            if len(known) >= _KEPT:
                known.pop(next(iter(known)))
            known[(experiment_id, key)] = (signature, verdict)
    return verdict


_KEPT = 256
_lock = threading.Lock()
_verdicts: weakref.WeakKeyDictionary[
    ReadOnlyDatabase, dict[tuple[str, str], tuple[tuple[Any, ...], bool]]
] = weakref.WeakKeyDictionary()


def _signature(db: ReadOnlyDatabase, experiment_id: str, key: str) -> tuple[Any, ...] | None:
    """What changes when the experiment's results may have: None while it runs, or
    without final stored figures."""
    row = db.query_one(
        "SELECT x.status, x.finished_at, s.row_count, s.final, m.n, m.errors, m.unscored, m.skipped "
        "FROM experiments x LEFT JOIN experiment_stats s ON s.experiment_id = x.id "
        "LEFT JOIN metric_stats m ON m.experiment_id = x.id AND m.key = ? WHERE x.id = ?",
        (key, experiment_id),
    )
    if row is None or row[0] == "running" or not row[3] or row[4] is None:
        return None
    return tuple(row)


def _counted(db: ReadOnlyDatabase, experiment_id: str, key: str, runs: int | None) -> bool:
    """One walk of the pair index: its (example, repetition) groups and their entries;
    ``runs``: the stored row count of a finished experiment, else counted."""
    if runs is None:
        runs = _scalar(db, "SELECT COUNT(*) FROM runs WHERE experiment_id = ?", [experiment_id])
    row = db.query_one(
        "SELECT COUNT(*), SUM(entries) FROM (SELECT COUNT(*) AS entries FROM results "
        "WHERE experiment_id = ? AND key = ? GROUP BY example_id, repetition) AS pairs",
        [experiment_id, key],
    )
    assert row is not None  # an aggregate always answers one row
    return bool(row[0] == runs and (row[1] or 0) == runs)


def _scalar(db: ReadOnlyDatabase, sql: str, params: list[Any]) -> Any:
    row = db.query_one(sql, params)
    assert row is not None  # an aggregate always answers one row
    return row[0]


def _scored(experiment_id: str, key: str, bounds: list[Bound]) -> tuple[str, list[Any]]:
    """``FROM ... WHERE ...`` of the scored entries within ``bounds``."""
    sql = f"FROM results r WHERE r.experiment_id = ? AND r.key = ? AND {RANK} IS NOT NULL"
    params: list[Any] = [experiment_id, key]
    for bound in bounds:
        sql += f" AND {RANK} {bound.op} ?"
        params.append(bound.value)
    return sql, params


def count(db: ReadOnlyDatabase, experiment_id: str, key: str, bounds: list[Bound]) -> int:
    """How many rows score within ``bounds`` (an index range, counted)."""
    source, params = _scored(experiment_id, key, bounds)
    return int(_scalar(db, f"SELECT COUNT(*) {source}", params))


def ordered_run_ids(
    db: ReadOnlyDatabase,
    experiment_id: str,
    key: str,
    *,
    descending: bool,
    bounds: list[Bound],
    limit: int,
    offset: int,
) -> list[str]:
    """Run ids of one page; the caller has checked ``one_result_per_row``. With bounds
    only scored rows qualify, so the unscored ones never follow."""
    where = _Scored(experiment_id, key, bounds)
    ids = (_descending if descending else _ascending)(db, where, limit, offset)
    if len(ids) == limit or bounds:
        return ids
    scored = offset + len(ids) if ids else count(db, experiment_id, key, [])
    rows = db.query(
        f"SELECT r.run_id FROM results r WHERE r.experiment_id = ? AND r.key = ? AND {RANK} IS NULL "
        "ORDER BY r.position, r.repetition LIMIT ? OFFSET ?",
        (experiment_id, key, limit - len(ids), max(0, offset - scored)),
    )
    return ids + [row[0] for row in rows]


@dataclass(frozen=True)
class _Scored:
    experiment_id: str
    key: str
    bounds: list[Bound]

    def sql(self) -> tuple[str, list[Any]]:
        return _scored(self.experiment_id, self.key, self.bounds)


def _ascending(db: ReadOnlyDatabase, where: _Scored, limit: int, offset: int) -> list[str]:
    source, params = where.sql()
    rows = db.query(
        f"SELECT r.run_id {source} ORDER BY {RANK}, r.position, r.repetition LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )
    return [row[0] for row in rows]


def _descending(db: ReadOnlyDatabase, where: _Scored, limit: int, offset: int) -> list[str]:
    source, params = where.sql()
    first = db.query_one(f"SELECT {RANK} {source} ORDER BY {RANK} DESC LIMIT 1 OFFSET ?", [*params, offset])
    if first is None:
        return []
    top = first[0]
    above = _scalar(db, f"SELECT COUNT(*) {source} AND {RANK} > ?", [*params, top])
    ids = _tied(db, where, top, limit, offset - int(above))
    if len(ids) == limit:
        return ids
    below = db.query(
        f"SELECT {RANK}, r.run_id {source} AND {RANK} < ? "
        f"ORDER BY {RANK} DESC, r.position DESC, r.repetition DESC LIMIT ?",
        [*params, top, limit - len(ids)],
    )
    if not below:
        return ids
    last = below[-1][0]
    whole = [(row[0], row[1]) for row in below if row[0] != last]
    for _, group in groupby(whole, key=lambda entry: entry[0]):
        ids += reversed([run_id for _, run_id in group])
    return ids + _tied(db, where, last, len(below) - len(whole), 0)


def _tied(db: ReadOnlyDatabase, where: _Scored, score: float, limit: int, offset: int) -> list[str]:
    """Rows scoring exactly ``score``, in data order. The bounds are left out: the score
    is within them, and a range beside the equality led SQLite's planner to sort."""
    source, params = _scored(where.experiment_id, where.key, [])
    rows = db.query(
        f"SELECT r.run_id {source} AND {RANK} = ? ORDER BY r.position, r.repetition LIMIT ? OFFSET ?",
        [*params, score, limit, offset],
    )
    return [row[0] for row in rows]
