"""Each metric's mean and 95% interval per experiment on a dataset, oldest first, with the
change from the previous experiment judged by the paired comparison the compare page
makes (better, worse, or no detectable difference)."""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.store.read.database import ReadOnlyDatabase
from assay.ui.errors import BadRequest
from assay.ui.models import ExperimentSummary
from assay.ui.queries import compare_page, find_experiment, metric_stats

__all__ = ["MAX_TREND", "Point", "Series", "trends"]

MAX_TREND = 50
"""The newest experiments a chart shows (each pair of neighbours is one paired comparison)."""


@dataclass(frozen=True)
class Point:
    experiment_id: str
    name: str
    created_at: str | None
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    change: str | None = None  # better | worse | no detectable difference | not enough pairs


@dataclass
class Series:
    key: str
    direction: str
    points: list[Point] = field(default_factory=list)


def trends(db: ReadOnlyDatabase, dataset_id: str) -> list[Series]:
    ids = [
        row["id"]
        for row in db.query(
            "SELECT id FROM experiments WHERE dataset_id = ? ORDER BY created_at DESC, name LIMIT ?",
            (dataset_id, MAX_TREND),
        )
    ][::-1]
    experiments = [x for x in (find_experiment(db, i) for i in ids) if x is not None]
    series: dict[str, Series] = {}
    for experiment in experiments:
        for stat in metric_stats(db, experiment.id):
            line = series.setdefault(stat.key, Series(stat.key, stat.direction))
            line.points.append(
                Point(
                    experiment.id,
                    experiment.name,
                    experiment.created_at,
                    stat.mean,
                    stat.ci_low,
                    stat.ci_high,
                )
            )
    _judge_changes(db, experiments, series)
    return list(series.values())


def _judge_changes(
    db: ReadOnlyDatabase, experiments: list[ExperimentSummary], series: dict[str, Series]
) -> None:
    """Each experiment against the one before it: the paired verdict per metric."""
    verdicts: dict[tuple[str, str], str] = {}
    for previous, current in zip(experiments, experiments[1:], strict=False):
        try:
            page = compare_page(db, [previous, current], show="all", metric=None, page=1, per_page=1)
        except BadRequest:  # not comparable (another dataset version's examples): no verdict
            continue
        for metric in page.metrics:
            paired = metric.paired.get(current.id)
            if paired is not None:
                verdicts[(metric.key, current.id)] = paired.verdict
    for line in series.values():
        line.points = [
            Point(**{**p.__dict__, "change": verdicts.get((line.key, p.experiment_id))}) for p in line.points
        ]
