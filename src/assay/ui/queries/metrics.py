"""Per-metric statistics and score distributions of one experiment, in two table passes.

Pass A groups results by key: mean, counts, range, and how many rows (clusters) hold a
score. Pass B groups by (key, histogram bin): counts and squared residuals about the
mean, which give both the histogram and the variance. When every cluster holds one
score (one repetition, one result per key and row) the clustered standard error of the
experiment report reduces to the plain one; otherwise a third query sums residuals per
example. Either way the numbers equal ``ExperimentResults.aggregate``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from assay._metric import UNIT_RANGE, MetricInfo, Range
from assay.evaluation._stats import mean_interval
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.pairing import METRIC_INFO_SQL, decode_metric_info
from assay.ui.models import Histogram, HistogramBin, MetricStat
from assay.ui.queries.stored import stored_metrics

__all__ = ["BINS", "SCORE", "metric_stats", "metrics_and_histograms"]


BINS = 10

# An errored result never counts as a score, even if an evaluator left one behind.
SCORE = "CASE WHEN r.error IS NULL THEN r.score END"

_PASS_A = f"""
SELECT r.key, MIN(r.pk) AS first_pk, AVG({SCORE}) AS mean, COUNT({SCORE}) AS n,
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


@dataclass(frozen=True)
class _KeyPass:
    key: str
    mean: float | None
    n: int
    errors: int
    unscored: int
    lo: float | None
    hi: float | None
    scored_runs: int
    binary: bool
    skipped: int = 0
    info: MetricInfo = MetricInfo()

    @property
    def unit_range(self) -> bool:
        return self.lo is not None and self.hi is not None and self.lo >= 0 and self.hi <= 1

    @property
    def bounds(self) -> Range | None:
        return self.info.score_range or (UNIT_RANGE if self.unit_range else None)


def metrics_and_histograms(
    db: ReadOnlyDatabase, experiment_id: str
) -> tuple[list[MetricStat], list[Histogram]]:
    """The stored figures when the experiment has them, else computed in SQL."""
    stored = stored_metrics(db, experiment_id)
    if stored is not None:
        return stored
    skipped = {row["key"]: int(row["skipped"]) for row in db.query(_SKIPPED, (experiment_id,))}
    keys = [
        _key_pass(row, skipped.get(row["key"], 0), _info(db, experiment_id, row["key"]))
        for row in db.query(_PASS_A, (experiment_id,))
    ]
    bins, squares = _pass_b(db, experiment_id, keys)
    clusters = _clusters(db, experiment_id, keys, squares)
    stats = [_stat(k, *clusters.get(k.key, (0, None))) for k in keys]
    return stats, [_histogram(k, bins.get(k.key, {})) for k in keys]


def metric_stats(db: ReadOnlyDatabase, experiment_id: str) -> list[MetricStat]:
    return metrics_and_histograms(db, experiment_id)[0]


def _info(db: ReadOnlyDatabase, experiment_id: str, key: str) -> MetricInfo:
    return MetricInfo.of(decode_metric_info(db.query_one(METRIC_INFO_SQL, (experiment_id, key))))


def _key_pass(row: Any, skipped: int, info: MetricInfo) -> _KeyPass:
    return _KeyPass(
        key=row["key"],
        mean=row["mean"],
        n=row["n"],
        errors=row["errors"],
        unscored=row["unscored"],
        lo=row["lo"],
        hi=row["hi"],
        scored_runs=row["scored_runs"],
        binary=bool(row["binary"]),
        skipped=skipped,
        info=info,
    )


def _case(column: str, keys: list[_KeyPass], field: str) -> tuple[str, list[Any]]:
    """``CASE key WHEN ? THEN ? ... END``: a per-key constant inside one query."""
    params: list[Any] = []
    for k in keys:
        params += [k.key, getattr(k, field)]
    return f"(CASE {column} {' '.join('WHEN ? THEN ?' for _ in keys)} END)", params


def _bin_expression(keys: list[_KeyPass]) -> tuple[str, list[Any]]:
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


def _pass_b(
    db: ReadOnlyDatabase, experiment_id: str, keys: list[_KeyPass]
) -> tuple[dict[str, dict[int, int]], dict[str, float]]:
    """Histogram counts per (key, bin) and the sum of squared residuals per key."""
    scored = [k for k in keys if k.n]
    if not scored:
        return {}, {}
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
    return bins, squares


def _clusters(
    db: ReadOnlyDatabase, experiment_id: str, keys: list[_KeyPass], squares: dict[str, float]
) -> dict[str, tuple[int, float | None]]:
    """Per key: (clusters, sum of squared per-cluster residual sums)."""
    repeated = db.query_one(
        "SELECT MAX(repetition) AS top FROM runs WHERE experiment_id = ?", (experiment_id,)
    )
    has_repetitions = bool(repeated and repeated["top"])
    simple = {k.key: (k.n, squares.get(k.key)) for k in keys if k.n == k.scored_runs}
    needs_join = [k for k in keys if k.n and (has_repetitions or k.key not in simple)]
    if not needs_join:
        return simple
    return {**simple, **_clustered_by_example(db, experiment_id, needs_join)}


def _clustered_by_example(
    db: ReadOnlyDatabase, experiment_id: str, keys: list[_KeyPass]
) -> dict[str, tuple[int, float | None]]:
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


def _stat(k: _KeyPass, groups: int, squares: float | None) -> MetricStat:
    stderr, interval = (
        (None, None)
        if k.mean is None
        else mean_interval(k.mean, k.n, groups, squares, binary=k.binary, bounds=k.bounds)
    )
    return MetricStat(
        key=k.key,
        mean=k.mean,
        n=k.n,
        errors=k.errors,
        unscored=k.unscored - k.skipped,
        skipped=k.skipped,
        stderr=stderr,
        ci_low=interval.low if interval else None,
        ci_high=interval.high if interval else None,
        ci_method=interval.method if interval else None,
        direction=k.info.direction,
        score_range=k.info.score_range,
        binary=k.binary,
        min=k.lo,
        max=k.hi,
        unit_range=k.unit_range,
    )


def _histogram(k: _KeyPass, counts: dict[int, int]) -> Histogram:
    if k.lo is None or k.hi is None:
        return Histogram(key=k.key, bins=[], errors=k.errors)
    low, high = (0.0, 1.0) if k.unit_range else (k.lo, k.hi)
    if high == low:
        only = HistogramBin(low=low, high=high, count=counts.get(0, 0))
        return Histogram(key=k.key, bins=[only], errors=k.errors)
    width = (high - low) / BINS
    bins = [
        HistogramBin(low=low + i * width, high=low + (i + 1) * width, count=counts.get(i, 0))
        for i in range(BINS)
    ]
    return Histogram(key=k.key, bins=bins, errors=k.errors)
