"""An experiment's stored figures (``assay.store.read.figures``) as the UI shows them.
Experiments stored before figures were kept have none: callers then fall back to SQL
aggregates over the rows."""

from __future__ import annotations

from assay.store.read import figures
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.figures import has_stats, stored_means
from assay.ui.models import Histogram, HistogramBin, LatencyStat, MetricStat
from assay.ui.queries._sql import loads

__all__ = ["has_stats", "stored_latency", "stored_means", "stored_metrics"]


def stored_latency(db: ReadOnlyDatabase, experiment_id: str) -> LatencyStat | None:
    found = figures.stored_latency(db, experiment_id)
    return None if found is None else LatencyStat(mean_ms=found.mean_ms, max_ms=found.latency_max)


def stored_metrics(
    db: ReadOnlyDatabase, experiment_id: str
) -> tuple[list[MetricStat], list[Histogram]] | None:
    rows = figures.stored_metrics(db, experiment_id)
    if rows is None:
        return None
    return [_stat(row) for row in rows], [_histogram(row) for row in rows]


def _stat(row: figures.MetricFigures) -> MetricStat:
    return MetricStat(
        key=row.key,
        mean=row.mean,
        n=row.n,
        errors=row.errors,
        unscored=row.unscored,
        stderr=row.stderr,
        ci_low=row.ci_low,
        ci_high=row.ci_high,
        min=row.min,
        max=row.max,
        unit_range=row.unit_range,
        skipped=row.skipped,
        ci_method=row.ci_method,
        direction=row.direction,
        score_range=tuple(loads(row.score_range)) if row.score_range else None,
        binary=bool(row.binary),
    )


def _histogram(row: figures.MetricFigures) -> Histogram:
    counts: list[int] = loads(row.histogram) or []
    if row.min is None or row.max is None or not counts:
        return Histogram(key=row.key, bins=[], errors=row.errors)
    low, high = (0.0, 1.0) if row.unit_range else (row.min, row.max)
    if len(counts) == 1:
        return Histogram(
            key=row.key, bins=[HistogramBin(low=low, high=high, count=counts[0])], errors=row.errors
        )
    width = (high - low) / len(counts)
    bins = [
        HistogramBin(low=low + i * width, high=low + (i + 1) * width, count=count)
        for i, count in enumerate(counts)
    ]
    return Histogram(key=row.key, bins=bins, errors=row.errors)
