"""An experiment's stored figures (written by the runner with its rows), so that pages
never scan an experiment's rows. Experiments stored before figures were kept have none:
callers then fall back to SQL aggregates over the rows."""

from __future__ import annotations

from typing import Any

from assay.store.read.database import ReadOnlyDatabase
from assay.ui.models import Histogram, HistogramBin, LatencyStat, MetricStat
from assay.ui.queries._sql import in_list, loads

__all__ = ["has_stats", "stored_latency", "stored_means", "stored_metrics"]


def has_stats(db: ReadOnlyDatabase, experiment_id: str) -> bool:
    return (
        db.query_one("SELECT 1 FROM experiment_stats WHERE experiment_id = ?", (experiment_id,)) is not None
    )


def stored_latency(db: ReadOnlyDatabase, experiment_id: str) -> LatencyStat | None:
    row = db.query_one(
        "SELECT latency_n, latency_sum, latency_max FROM experiment_stats WHERE experiment_id = ?",
        (experiment_id,),
    )
    if row is None:
        return None
    mean = row["latency_sum"] / row["latency_n"] if row["latency_n"] else None
    return LatencyStat(mean_ms=mean, max_ms=row["latency_max"])


def stored_metrics(
    db: ReadOnlyDatabase, experiment_id: str
) -> tuple[list[MetricStat], list[Histogram]] | None:
    if not has_stats(db, experiment_id):
        return None
    rows = db.query("SELECT * FROM metric_stats WHERE experiment_id = ? ORDER BY ordinal", (experiment_id,))
    return [_stat(row) for row in rows], [_histogram(row) for row in rows]


def stored_means(db: ReadOnlyDatabase, experiment_ids: list[str]) -> dict[str, dict[str, float | None]]:
    """Metric means of the experiments that have stored figures (others are absent)."""
    if not experiment_ids:
        return {}
    ids, params = in_list(experiment_ids)
    means: dict[str, dict[str, float | None]] = {
        row["experiment_id"]: {}
        for row in db.query(
            f"SELECT experiment_id FROM experiment_stats WHERE experiment_id IN {ids}", params
        )
    }
    for row in db.query(
        f"SELECT experiment_id, key, mean FROM metric_stats WHERE experiment_id IN {ids} "
        "ORDER BY experiment_id, ordinal",
        params,
    ):
        means[row["experiment_id"]][row["key"]] = row["mean"]
    return means


def _unit_range(row: Any) -> bool:
    return row["min"] is not None and row["max"] is not None and row["min"] >= 0 and row["max"] <= 1


def _stat(row: Any) -> MetricStat:
    return MetricStat(
        key=row["key"],
        mean=row["mean"],
        n=row["n"],
        errors=row["errors"],
        unscored=row["unscored"],
        stderr=row["stderr"],
        ci_low=row["ci_low"],
        ci_high=row["ci_high"],
        min=row["min"],
        max=row["max"],
        unit_range=_unit_range(row),
        skipped=row["skipped"],
        ci_method=row["ci_method"],
        direction=row["direction"],
        score_range=tuple(loads(row["score_range"])) if row["score_range"] else None,
        binary=bool(row["binary"]),
    )


def _histogram(row: Any) -> Histogram:
    counts: list[int] = loads(row["histogram"]) or []
    if row["min"] is None or row["max"] is None or not counts:
        return Histogram(key=row["key"], bins=[], errors=row["errors"])
    low, high = (0.0, 1.0) if _unit_range(row) else (row["min"], row["max"])
    if len(counts) == 1:
        return Histogram(
            key=row["key"], bins=[HistogramBin(low=low, high=high, count=counts[0])], errors=row["errors"]
        )
    width = (high - low) / len(counts)
    bins = [
        HistogramBin(low=low + i * width, high=low + (i + 1) * width, count=count)
        for i, count in enumerate(counts)
    ]
    return Histogram(key=row["key"], bins=bins, errors=row["errors"])
