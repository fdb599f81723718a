"""Per-metric aggregates of one experiment over its results, for experiments without
stored figures (``figures``), in two table passes.

Pass A groups results by key: mean, counts, range, and how many rows hold a score.
Pass B groups by (key, histogram bin): counts and squared residuals about the mean,
which give both the histogram and the variance. When a metric has more than one score
in a cluster (an example), a third query sums residuals per example.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay._metric import MetricInfo
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.figures import has_stats
from assay.store.read.pairing import METRIC_INFO_SQL, decode_metric_info
from assay.store.read.sql import records

__all__ = [
    "BINS",
    "SCORE",
    "KeyPass",
    "Spread",
    "binary_keys",
    "clustered_squares",
    "has_repetitions",
    "key_passes",
    "metric_info",
    "metric_keys",
    "skipped",
    "spread",
]

BINS = 10

# An errored result never counts as a score, even if an evaluator left one behind.
SCORE = "CASE WHEN r.error IS NULL THEN r.score END"


@dataclass(frozen=True, slots=True)
class KeyPass:
    """Pass A of one metric: its scores' mean, count and range, its errors, its results
    without a score, and how many runs hold a score (a score per run: ``n == scored_runs``)."""

    key: str
    mean: float | None
    n: int
    errors: int
    unscored: int
    lo: float | None
    hi: float | None
    scored_runs: int
    binary: int

    @property
    def unit_range(self) -> bool:
        return self.lo is not None and self.hi is not None and self.lo >= 0 and self.hi <= 1


@dataclass(frozen=True, slots=True)
class Spread:
    """Pass B: histogram counts per (key, bin) and the sum of squared residuals per key."""

    bins: dict[str, dict[int, int]]
    squares: dict[str, float]


def metric_keys(db: ReadOnlyDatabase, experiment_id: str) -> list[str]:
    """Metric keys in the order evaluators first produced them (stored, else index-only)."""
    if has_stats(db, experiment_id):
        stored = db.query(
            "SELECT key FROM metric_stats WHERE experiment_id = ? ORDER BY ordinal", (experiment_id,)
        )
        return [row["key"] for row in stored]
    rows = db.query(
        "SELECT key FROM results WHERE experiment_id = ? GROUP BY key ORDER BY MIN(pk)", (experiment_id,)
    )
    return [row["key"] for row in rows]


def metric_info(db: ReadOnlyDatabase, experiment_id: str, key: str) -> MetricInfo:
    """What the experiment's evaluators declared of a metric (direction, range)."""
    return MetricInfo.of(decode_metric_info(db.query_one(METRIC_INFO_SQL, (experiment_id, key))))


# Per metric whose scores are all 0 or 1: from the stored figures, else the metric index.
_STORED_BINARY_KEYS = "SELECT key FROM metric_stats WHERE experiment_id = ? AND binary = 1"
_BINARY_KEYS = (
    "SELECT key FROM results WHERE experiment_id = ? AND score IS NOT NULL "
    "GROUP BY key HAVING MIN(score = 0.0 OR score = 1.0) = 1"
)


def binary_keys(db: ReadOnlyDatabase, experiment_id: str) -> list[str]:
    """The metrics whose every score is 0 or 1."""
    query = _STORED_BINARY_KEYS if has_stats(db, experiment_id) else _BINARY_KEYS
    return [row["key"] for row in db.query(query, (experiment_id,))]


_PASS_A = f"""
SELECT r.key AS key, MIN(r.pk) AS first_pk, AVG({SCORE}) AS mean, COUNT({SCORE}) AS n,
       SUM(r.error IS NOT NULL) AS errors, SUM(r.error IS NULL AND r.score IS NULL) AS unscored,
       MIN({SCORE}) AS lo, MAX({SCORE}) AS hi,
       COUNT(DISTINCT CASE WHEN {SCORE} IS NOT NULL THEN r.run_id END) AS scored_runs,
       COALESCE(MIN(CASE WHEN {SCORE} IS NOT NULL THEN r.score = 0.0 OR r.score = 1.0 END), 0)
           AS binary
FROM results r WHERE r.experiment_id = ? GROUP BY r.key ORDER BY first_pk
"""

# Skipped: no score and no error on a row whose target failed (the outcome model).
_SKIPPED = """
SELECT r.key, COUNT(*) AS skipped FROM results r JOIN runs u ON u.id = r.run_id
WHERE r.experiment_id = ? AND r.error IS NULL AND r.score IS NULL AND u.error IS NOT NULL
GROUP BY r.key
"""


def key_passes(db: ReadOnlyDatabase, experiment_id: str) -> list[KeyPass]:
    """Pass A, per metric in the order evaluators first produced them."""
    return records(KeyPass, db.query(_PASS_A, (experiment_id,)))


def skipped(db: ReadOnlyDatabase, experiment_id: str) -> dict[str, int]:
    """Per metric, results skipped because the row's target failed."""
    return {row["key"]: int(row["skipped"]) for row in db.query(_SKIPPED, (experiment_id,))}


def _case(column: str, keys: Sequence[KeyPass], field: str) -> tuple[str, list[Any]]:
    """``CASE key WHEN ? THEN ? ... END``: a per-key constant inside one query."""
    params: list[Any] = []
    for k in keys:
        params += [k.key, getattr(k, field)]
    return f"(CASE {column} {' '.join('WHEN ? THEN ?' for _ in keys)} END)", params


def _bin_expression(keys: Sequence[KeyPass]) -> tuple[str, list[Any]]:
    lo, lo_params = _case("r.key", keys, "lo")
    hi, hi_params = _case("r.key", keys, "hi")
    unit = [k.key for k in keys if k.unit_range]
    unit_marks = ", ".join("?" * len(unit))
    sql = (
        f"CASE WHEN r.key IN ({unit_marks}) "
        f"THEN MIN(CAST(r.score * {BINS} AS INTEGER), {BINS - 1}) "
        f"WHEN {hi} = {lo} THEN 0 "
        f"ELSE MIN(CAST((r.score - {lo}) * {BINS} / ({hi} - {lo}) AS INTEGER), {BINS - 1}) END"
    )
    # Parameters in the order their marks appear in the SQL text.
    return sql, [*unit, *hi_params, *lo_params, *lo_params, *hi_params, *lo_params]


def spread(db: ReadOnlyDatabase, experiment_id: str, keys: Sequence[KeyPass]) -> Spread:
    """Pass B over the metrics of ``keys`` that hold a score."""
    scored = [k for k in keys if k.n]
    if not scored:
        return Spread({}, {})
    mean, mean_params = _case("r.key", scored, "mean")
    bin_sql, bin_params = _bin_expression(scored)
    rows = db.query(
        f"SELECT r.key, {bin_sql} AS bin, COUNT(*) AS count, "
        f"SUM((r.score - {mean}) * (r.score - {mean})) AS squares "
        "FROM results r WHERE r.experiment_id = ? AND r.error IS NULL AND r.score IS NOT NULL "
        "GROUP BY r.key, bin",
        [*bin_params, *mean_params, *mean_params, experiment_id],
    )
    bins: dict[str, dict[int, int]] = defaultdict(dict)
    squares: dict[str, float] = defaultdict(float)
    for row in rows:
        bins[row["key"]][int(row["bin"])] = int(row["count"])
        squares[row["key"]] += float(row["squares"])
    return Spread(bins, squares)


def has_repetitions(db: ReadOnlyDatabase, experiment_id: str) -> bool:
    repeated = db.query_one(
        "SELECT MAX(repetition) AS top FROM runs WHERE experiment_id = ?", (experiment_id,)
    )
    return bool(repeated and repeated["top"])


def clustered_squares(
    db: ReadOnlyDatabase, experiment_id: str, keys: Sequence[KeyPass]
) -> dict[str, tuple[int, float | None]]:
    """Per metric: (examples holding a score, the sum of squared per-example residual sums)."""
    mean, mean_params = _case("r.key", keys, "mean")
    marks = ", ".join("?" * len(keys))
    rows = db.query(
        f"SELECT key, COUNT(*) AS groups, SUM(residual * residual) AS squares FROM ("
        f"  SELECT r.key AS key, SUM(r.score - {mean}) AS residual "
        "  FROM results r JOIN runs u ON u.id = r.run_id "
        f"  WHERE r.experiment_id = ? AND r.key IN ({marks}) AND r.error IS NULL "
        "  AND r.score IS NOT NULL GROUP BY r.key, u.example_id"
        ") GROUP BY key",
        [*mean_params, experiment_id, *[k.key for k in keys]],
    )
    return {row["key"]: (int(row["groups"]), row["squares"]) for row in rows}
