"""Each metric's mean and 95% interval per experiment on a dataset, oldest first, with the
change from the previous experiment judged by the paired comparison the compare page
makes (better, worse, or no detectable difference)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

from assay.store.read import experiments as stored
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.kept import kept_value, signatures
from assay.ui.errors import BadRequest
from assay.ui.models import ExperimentSummary
from assay.ui.queries import find_experiment, metric_stats
from assay.ui.queries.compare import check_comparable, paired_statistics

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
    ids = stored.newest_ids(db, dataset_id, MAX_TREND)[::-1]
    experiments = [x for x in (find_experiment(db, i) for i in ids) if x is not None]
    standing = signatures(db, [x.id for x in experiments])
    series: dict[str, Series] = {}
    for experiment in experiments:
        stats = kept_value(
            db,
            ("trend stats", experiment.id),
            (standing[experiment.id],),
            partial(metric_stats, db, experiment.id),
        )
        for stat in stats:
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
    _judge_changes(db, experiments, series, standing)
    return list(series.values())


def _judge_changes(
    db: ReadOnlyDatabase,
    experiments: list[ExperimentSummary],
    series: dict[str, Series],
    standing: dict[str, Any],
) -> None:
    """Each experiment against the one before it: the paired verdict per metric, kept per
    pair while both stand still (a new experiment adds one comparison, not 49)."""
    verdicts: dict[tuple[str, str], str] = {}
    for previous, current in zip(experiments, experiments[1:], strict=False):
        pair = (standing[previous.id], standing[current.id])
        found = kept_value(
            db, ("trend pair", previous.id, current.id), pair, partial(_verdicts, db, previous, current)
        )
        verdicts.update({(key, current.id): verdict for key, verdict in found.items()})
    for line in series.values():
        line.points = [
            Point(**{**p.__dict__, "change": verdicts.get((line.key, p.experiment_id))}) for p in line.points
        ]


def _verdicts(
    db: ReadOnlyDatabase, previous: ExperimentSummary, current: ExperimentSummary
) -> dict[str, str]:
    """The paired verdict of ``current`` against ``previous`` per metric, as compare reads it."""
    try:
        check_comparable([previous, current])
    except BadRequest:  # not comparable (another dataset version's examples): no verdict
        return {}
    paired, _, _ = paired_statistics(db, [previous, current])
    return {key: by_other[current.id].verdict for key, by_other in paired.items() if current.id in by_other}
