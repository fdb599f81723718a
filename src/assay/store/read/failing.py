"""Which rows fail, as SQL: per row (a condition on its results) and as a set (a union of
index ranges, to count them).

"Failed" = the target call failed, or an evaluator failed, or a metric is failing: at
or worse than its threshold. A 0/1 metric's threshold is its worst value (0, or 1 when
lower is better) unless the user sets another or none; a continuous metric has none
until the user sets one (every similarity below 1 is not a failure). The older
``worse_than`` of the chosen metric is a strict threshold and wins over both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.metrics import binary_keys
from assay.store.read.ranked import RANK

__all__ = ["FAILED", "FLAGGED", "Failing", "count_failing", "failing"]

FAILED = "(u.error IS NOT NULL OR EXISTS (SELECT 1 FROM results r WHERE r.run_id = u.id AND ({failing})))"

# Rows the store flagged: target or evaluator failed, or a score below 1. A superset of
# the failing rows whenever no failing value lies at or above 1 (no lower-is-better 0/1
# metric, no threshold): then the indexed flag narrows the search first.
FLAGGED = "u.failed = 1"


@dataclass(frozen=True)
class Failing:
    """What fails a row: an error, or a score of ``key`` ``op`` ``value``, per test."""

    tests: list[tuple[str, str, float]]
    flagged: bool  # whether the stored flag may narrow the search first

    def condition(self) -> tuple[str, list[Any]]:
        """The SQL condition on a result ``r`` that makes its row failing."""
        conditions, params = ["r.error IS NOT NULL"], []
        for key, op, value in self.tests:
            conditions.append(f"(r.key = ? AND r.score {op} ?)")
            params += [key, value]
        return " OR ".join(conditions), params


def failing(
    db: ReadOnlyDatabase,
    experiment_id: str,
    *,
    metric: str | None,
    worse_than: float | None,
    thresholds: Mapping[str, float | None],
    lower: set[str],
) -> Failing:
    """What fails a row of the experiment, given the user's ``thresholds`` (per metric;
    None: none) and the chosen ``metric`` ``worse_than`` a value; ``lower``: the metrics
    where lower is better."""
    chosen = metric if worse_than is not None else None
    every: dict[str, float | None] = {
        key: 1.0 if key in lower else 0.0 for key in binary_keys(db, experiment_id)
    }
    every.update(thresholds)
    # The stored flag (an error, or a score below 1) covers every failing row only when
    # each threshold fails scores below 1 alone.
    flagged = chosen is None
    tests = []
    for key, threshold in every.items():
        if key == chosen or threshold is None:
            continue
        tests.append((key, ">=" if key in lower else "<=", threshold))
        flagged = flagged and key not in lower and threshold < 1
    if chosen is not None and worse_than is not None:
        tests.append((chosen, ">" if chosen in lower else "<", worse_than))
    return Failing(tests, flagged)


def count_failing(db: ReadOnlyDatabase, experiment_id: str, keys: list[str], spec: Failing) -> int:
    """How many rows fail, as the union of index ranges: the errored runs, each metric's
    errored results and its failing score range, by (position, repetition), a row's
    place (one per row of an experiment). Reads the failing entries only, where a check
    per row reads every row's results."""
    parts = [
        "SELECT u.position, u.repetition FROM runs u WHERE u.experiment_id = ? AND "
        "CASE WHEN u.error IS NULL THEN 0 ELSE 1 END = 1"
    ]
    params: list[Any] = [experiment_id]
    scope = "SELECT r.position, r.repetition FROM results r WHERE r.experiment_id = ? AND r.key = ?"
    for key in keys:
        parts.append(f"{scope} AND {RANK} IS NULL AND r.error IS NOT NULL")
        params += [experiment_id, key]
    for key, op, value in spec.tests:
        parts.append(f"{scope} AND {RANK} {op} ?")
        params += [experiment_id, key, value]
    row = db.query_one(f"SELECT COUNT(*) FROM ({' UNION '.join(parts)}) AS failing", params)
    assert row is not None  # an aggregate always answers one row
    return int(row[0])
