"""An experiment's stored figures (written by the runner with its rows), so that pages
never scan an experiment's rows. Experiments stored before figures were kept have none:
callers then fall back to the aggregates of ``metrics``."""

from __future__ import annotations

from dataclasses import dataclass

from assay._metric import Direction
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.sql import in_list, records

__all__ = [
    "LatencyFigures",
    "MetricFigures",
    "finished_with_figures",
    "has_stats",
    "stored_latency",
    "stored_means",
    "stored_metrics",
]


@dataclass(frozen=True, slots=True)
class LatencyFigures:
    latency_n: int | None
    latency_sum: float | None
    latency_max: float | None

    @property
    def mean_ms(self) -> float | None:
        return self.latency_sum / self.latency_n if self.latency_n and self.latency_sum is not None else None


@dataclass(frozen=True, slots=True)
class MetricFigures:
    """One metric's stored figures; ``score_range`` and ``histogram`` as stored JSON text."""

    key: str
    mean: float | None
    n: int
    errors: int
    unscored: int
    skipped: int
    stderr: float | None
    ci_low: float | None
    ci_high: float | None
    ci_method: str | None
    min: float | None
    max: float | None
    direction: Direction
    score_range: str | None
    binary: int
    histogram: str | None

    @property
    def unit_range(self) -> bool:
        return self.min is not None and self.max is not None and self.min >= 0 and self.max <= 1


def has_stats(db: ReadOnlyDatabase, experiment_id: str) -> bool:
    found = db.query_one("SELECT 1 FROM experiment_stats WHERE experiment_id = ?", (experiment_id,))
    return found is not None


def finished_with_figures(db: ReadOnlyDatabase, ids: list[str]) -> bool:
    """Whether every experiment ended and stored its figures (then no scan is needed)."""
    marks, params = in_list(ids)
    found = db.query(
        f"SELECT COUNT(*) FROM experiment_stats WHERE final = 1 AND experiment_id IN {marks}", params
    )[0][0]
    return int(found) == len(set(ids))


def stored_latency(db: ReadOnlyDatabase, experiment_id: str) -> LatencyFigures | None:
    rows = db.query(
        "SELECT latency_n, latency_sum, latency_max FROM experiment_stats WHERE experiment_id = ?",
        (experiment_id,),
    )
    return records(LatencyFigures, rows)[0] if rows else None


def stored_metrics(db: ReadOnlyDatabase, experiment_id: str) -> list[MetricFigures] | None:
    """Each metric's figures in the order evaluators first produced them (None: none stored)."""
    if not has_stats(db, experiment_id):
        return None
    rows = db.query("SELECT * FROM metric_stats WHERE experiment_id = ? ORDER BY ordinal", (experiment_id,))
    return records(MetricFigures, rows)


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
