"""Per-metric statistics and score distributions of one experiment: the stored figures
when it has them, else the aggregates of ``assay.store.read.metrics``. When every
cluster holds one score (one repetition, one result per key and row) the clustered
standard error of the experiment report reduces to the plain one; otherwise the sums
per example are read. Either way the numbers equal ``ExperimentResults.aggregate``.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay._metric import UNIT_RANGE, MetricInfo, Range
from assay.evaluation._stats import mean_interval
from assay.store.read import metrics as aggregates
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.metrics import BINS, SCORE, KeyPass
from assay.ui.models import Histogram, HistogramBin, MetricStat
from assay.ui.queries.stored import stored_metrics

__all__ = ["BINS", "SCORE", "metric_stats", "metrics_and_histograms"]


@dataclass(frozen=True)
class _Metric:
    """Pass A of a metric with what the experiment declared of it."""

    passed: KeyPass
    skipped: int
    info: MetricInfo

    @property
    def bounds(self) -> Range | None:
        return self.info.score_range or (UNIT_RANGE if self.passed.unit_range else None)


def metrics_and_histograms(
    db: ReadOnlyDatabase, experiment_id: str
) -> tuple[list[MetricStat], list[Histogram]]:
    """The stored figures when the experiment has them, else computed in SQL."""
    stored = stored_metrics(db, experiment_id)
    if stored is not None:
        return stored
    skipped = aggregates.skipped(db, experiment_id)
    keys = aggregates.key_passes(db, experiment_id)
    found = [
        _Metric(k, skipped.get(k.key, 0), aggregates.metric_info(db, experiment_id, k.key)) for k in keys
    ]
    spread = aggregates.spread(db, experiment_id, keys)
    clusters = _clusters(db, experiment_id, keys, spread.squares)
    stats = [_stat(m, *clusters.get(m.passed.key, (0, None))) for m in found]
    return stats, [_histogram(k, spread.bins.get(k.key, {})) for k in keys]


def metric_stats(db: ReadOnlyDatabase, experiment_id: str) -> list[MetricStat]:
    return metrics_and_histograms(db, experiment_id)[0]


def _clusters(
    db: ReadOnlyDatabase, experiment_id: str, keys: list[KeyPass], squares: dict[str, float]
) -> dict[str, tuple[int, float | None]]:
    """Per key: (clusters, sum of squared per-cluster residual sums)."""
    repeated = aggregates.has_repetitions(db, experiment_id)
    simple = {k.key: (k.n, squares.get(k.key)) for k in keys if k.n == k.scored_runs}
    needs_join = [k for k in keys if k.n and (repeated or k.key not in simple)]
    if not needs_join:
        return simple
    return {**simple, **aggregates.clustered_squares(db, experiment_id, needs_join)}


def _stat(m: _Metric, groups: int, squares: float | None) -> MetricStat:
    k = m.passed
    stderr, interval = (
        (None, None)
        if k.mean is None
        else mean_interval(k.mean, k.n, groups, squares, binary=bool(k.binary), bounds=m.bounds)
    )
    return MetricStat(
        key=k.key,
        mean=k.mean,
        n=k.n,
        errors=k.errors,
        unscored=k.unscored - m.skipped,
        skipped=m.skipped,
        stderr=stderr,
        ci_low=interval.low if interval else None,
        ci_high=interval.high if interval else None,
        ci_method=interval.method if interval else None,
        direction=m.info.direction,
        score_range=m.info.score_range,
        binary=bool(k.binary),
        min=k.lo,
        max=k.hi,
        unit_range=k.unit_range,
    )


def _histogram(k: KeyPass, counts: dict[int, int]) -> Histogram:
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
