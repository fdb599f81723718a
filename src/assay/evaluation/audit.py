"""Whether an experiment's stored figures agree with its stored rows: the counts and each
metric's n, errors, skipped and mean, recomputed from the rows. What a fault (a killed
run, a fenced writer, an empty answer) must never leave behind is a disagreement."""

from __future__ import annotations

import math

from assay.evaluation._tally import tally_of_stored
from assay.store.base import Store
from assay.store.records import ExperimentRecord, ExperimentStats, MetricStats

__all__ = ["figure_mismatches", "recompute_figures"]

_COUNTS = ("rows", "run_errors")
_METRIC_COUNTS = ("n", "errors", "skipped", "unscored")


def figure_mismatches(store: Store, experiment: ExperimentRecord) -> list[str]:
    """What the stored figures say that the rows do not (empty: they agree, or none are
    stored yet)."""
    stored = store.load_stats(experiment.id)
    if stored is None:
        return []
    recomputed = tally_of_stored(store.iter_scores(experiment.id)).stats(final=True)
    problems = [
        f"{name}: stored {getattr(stored, name)}, rows say {getattr(recomputed, name)}"
        for name in _COUNTS
        if getattr(stored, name) != getattr(recomputed, name)
    ]
    if stored.final or stored.metrics is not None:
        problems += _metric_mismatches(stored, recomputed)
    return problems


def recompute_figures(store: Store, experiment: ExperimentRecord) -> ExperimentStats:
    """The experiment's figures from its stored rows, stored in place of the old ones (a
    salvaged store's rows may be fewer than its figures counted)."""
    stats = tally_of_stored(store.iter_scores(experiment.id)).stats(final=experiment.status == "completed")
    store.write_stats(experiment.id, stats)
    return stats


def _metric_mismatches(stored: ExperimentStats, recomputed: ExperimentStats) -> list[str]:
    mine = {metric.key: metric for metric in stored.metrics or []}
    theirs = {metric.key: metric for metric in recomputed.metrics or []}
    problems = [f"metric {key!r}: stored, but no row has it" for key in mine.keys() - theirs.keys()]
    if stored.final:  # figures stored while running may predate the last rows' metrics
        problems += [f"metric {key!r}: in the rows, not stored" for key in theirs.keys() - mine.keys()]
    for key in mine.keys() & theirs.keys():
        problems += _one_metric(mine[key], theirs[key], exact=stored.final)
    return problems


def _one_metric(stored: MetricStats, rows: MetricStats, *, exact: bool) -> list[str]:
    if not exact:
        return []
    problems = [
        f"metric {stored.key!r} {name}: stored {getattr(stored, name)}, rows say {getattr(rows, name)}"
        for name in _METRIC_COUNTS
        if getattr(stored, name) != getattr(rows, name)
    ]
    if not _close(stored.mean, rows.mean):
        problems.append(f"metric {stored.key!r} mean: stored {stored.mean}, rows say {rows.mean}")
    return problems


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
