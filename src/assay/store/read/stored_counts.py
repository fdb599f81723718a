"""Counts of a finished experiment's rows read from its stored metric columns
(``store._columns``) instead of walking an index: "how many rows score below 0.5" and
"how many rows fail" are then one blob per metric and a vectorized pass (tens of
milliseconds at a million rows) where the index walk reads half a million entries
(1-4 s on a server's first view).

The columns hold, per metric, every result's score (NaN where none) and outcome in one
order, the pair index's. A count is read from them only when they answer it exactly,
as the SQL would: every metric holds one result per row, in the same rows (equal key
digests), and each metric's errored results are the ones the stored figures count (so
no errored result kept a score). Otherwise the answer is None and the caller counts in
SQL.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.store import _columns as columns
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.walk import Bound

__all__ = [
    "compared",
    "count_failing",
    "count_ranked",
    "count_within",
    "failing_by_results",
    "load_numpy",
    "results_answer_failing",
    "usable",
]

_COMPARE = {"<": "less", "<=": "less_equal", ">": "greater", ">=": "greater_equal"}


def load_numpy() -> None:
    """Import numpy (0.2-1 s): a server calls it in the background when it starts, so
    that its first counted page does not wait for it."""
    import numpy  # noqa: F401


def count_within(db: ReadOnlyDatabase, experiment_id: str, key: str, bounds: Sequence[Bound]) -> int | None:
    """How many rows score ``key`` within every bound (errored results excluded), or None."""
    import numpy as np

    found = usable(db, experiment_id, [key], scored=[key])
    if found is None:
        return None
    scores, _ = found[key]
    within = np.ones(len(scores), dtype=bool)
    for bound in bounds:
        within &= compared(scores, bound.op, bound.value)
    return int(within.sum())


def count_ranked(db: ReadOnlyDatabase, experiment_id: str, key: str) -> int | None:
    """How many rows hold a score of ``key`` (no error, not unscored), or None."""
    import numpy as np

    found = usable(db, experiment_id, [key], scored=[key])
    return None if found is None else int((~np.isnan(found[key][0])).sum())


def count_failing(
    db: ReadOnlyDatabase, experiment_id: str, keys: Sequence[str], tests: Sequence[tuple[str, str, float]]
) -> int | None:
    """How many rows fail (as ``failing.count_failing`` counts them: the target failed,
    an evaluator of ``keys`` failed, or a score of a test's key compares with its value
    by its op), or None. A row whose target failed holds only skipped results (the
    stored figures say so), so those rows are added to the ones failing by results."""
    facts = _run_errors(db, experiment_id, keys)
    if facts is None or not keys:
        return None
    found = usable(db, experiment_id, keys, scored=sorted({key for key, _, _ in tests}))
    if found is None:
        return None
    return int(failing_by_results(found, tests).sum()) + facts


def failing_by_results(found: dict[str, tuple[Any, Any]], tests: Sequence[tuple[str, str, float]]) -> Any:
    """Which rows fail by their results (``usable``'s arrays of every metric): an
    errored result, or a score of a test's key that compares with its value by its op.
    The rows whose target failed are not among them (their results are skipped)."""
    import numpy as np

    failing = np.zeros(len(next(iter(found.values()))[1]), dtype=bool)
    for _, outcomes in found.values():
        failing |= outcomes == columns.ERRORED
    for key, op, value in tests:
        if key in found:
            failing |= compared(found[key][0], op, value)
    return failing


def results_answer_failing(db: ReadOnlyDatabase, experiment_id: str, keys: Sequence[str]) -> bool:
    """Whether the rows whose target failed hold only skipped results of ``keys`` (so
    that they score nothing, and fail by their target alone)."""
    return bool(keys) and _run_errors(db, experiment_id, keys) is not None


def usable(
    db: ReadOnlyDatabase, experiment_id: str, keys: Sequence[str], scored: Sequence[str] = ()
) -> dict[str, tuple[Any, Any]] | None:
    """Per metric of ``keys``, its scores (only of the metrics ``scored``; else None) and
    outcomes, arrays in one row order, when they count exactly as the SQL does; else None.
    Only the blobs a count needs are read (a metric's scores are 8 bytes a row), and
    kept while the columns stand (a page's count and its seek read them once)."""
    if not keys:
        return None
    built = db.query_one(
        "SELECT built_at FROM metric_column_sets WHERE experiment_id = ? AND built_at IS NOT NULL",
        (experiment_id,),
    )
    loaded = None if built is None else _loaded(db, experiment_id, str(built[0]), set(keys), set(scored))
    if loaded is None or not all(loaded[key].one_per_row for key in keys):
        return None  # no columns, or a row without one result of a metric
    if len({loaded[key].digest for key in keys}) != 1:
        return None  # the metrics' rows differ
    errors = _stored_errors(db, experiment_id)
    arrays = {}
    for key in set(keys):
        column = loaded[key]
        if errors.get(key) != int((column.outcomes == columns.ERRORED).sum()):
            return None  # an errored result kept its score, or the figures are of other results
        arrays[key] = (column.scores if key in scored else None, column.outcomes)
    return arrays


@dataclass(frozen=True)
class _Column:
    one_per_row: bool
    digest: str
    scores: Any  # None when not read
    outcomes: Any


# Per reader, the columns read of the last experiments (a metric's: 9 bytes a row).
_KEPT_SETS = 2
_kept_lock = threading.Lock()
_kept: weakref.WeakKeyDictionary[ReadOnlyDatabase, dict[tuple[str, str], dict[str, _Column]]] = (
    weakref.WeakKeyDictionary()
)


def _loaded(
    db: ReadOnlyDatabase, experiment_id: str, built_at: str, keys: set[str], scored: set[str]
) -> dict[str, _Column] | None:
    """The columns of ``keys`` (with the scores of ``scored``) of the set built at
    ``built_at``, read where not kept; None when a key has none (or the set changed)."""
    import numpy as np

    with _kept_lock:
        kept = dict(_kept.setdefault(db, {}).get((experiment_id, built_at), {}))
    missing = sorted(k for k in keys if k not in kept or (k in scored and kept[k].scores is None))
    if missing:
        want_scores = sorted(scored & set(missing))
        scored_marks = ", ".join("?" * len(want_scores)) or "NULL"
        rows = db.query(
            f"SELECT c.key, c.one_per_row, c.keys_digest, CASE WHEN c.key IN ({scored_marks}) THEN c.scores END, "
            "c.outcomes FROM metric_column_sets s JOIN metric_columns c ON c.experiment_id = s.experiment_id "
            f"WHERE s.experiment_id = ? AND s.built_at = ? AND c.key IN ({', '.join('?' * len(missing))})",
            [*want_scores, experiment_id, built_at, *missing],
        )
        for key, one_per_row, digest, scores, outcomes in rows:
            kept[key] = _Column(
                bool(one_per_row),
                digest,
                None if scores is None else np.frombuffer(bytes(scores), dtype=np.float64),
                np.frombuffer(bytes(outcomes), dtype=np.int8),
            )
        with _kept_lock:
            sets = _kept.setdefault(db, {})
            sets.pop((experiment_id, built_at), None)
            while len(sets) >= _KEPT_SETS:
                sets.pop(next(iter(sets)))
            sets[(experiment_id, built_at)] = kept
    if not keys <= kept.keys():
        return None
    return kept


def compared(scores: Any, op: str, value: float) -> Any:
    import numpy as np

    with np.errstate(invalid="ignore"):  # NaN (no score) compares False, as NULL does
        compared: Any = getattr(np, _COMPARE[op])(scores, value)
    return compared


def _stored_errors(db: ReadOnlyDatabase, experiment_id: str) -> dict[str, int]:
    """Per metric, its errored results as the final stored figures count them."""
    rows = db.query(
        "SELECT m.key, m.errors FROM metric_stats m JOIN experiment_stats s ON s.experiment_id = m.experiment_id "
        "WHERE m.experiment_id = ? AND s.final = 1",
        (experiment_id,),
    )
    return {row["key"]: int(row["errors"]) for row in rows}


def _run_errors(db: ReadOnlyDatabase, experiment_id: str, keys: Sequence[str]) -> int | None:
    """The rows whose target failed, when each of them holds only skipped results of
    ``keys`` (every metric skipped exactly that many); else None."""
    stats = db.query_one(
        "SELECT run_errors FROM experiment_stats WHERE experiment_id = ? AND final = 1", (experiment_id,)
    )
    if stats is None:
        return None
    run_errors = int(stats["run_errors"])
    skipped = {
        row["key"]: int(row["skipped"])
        for row in db.query("SELECT key, skipped FROM metric_stats WHERE experiment_id = ?", (experiment_id,))
    }
    return run_errors if all(skipped.get(key) == run_errors for key in keys) else None
