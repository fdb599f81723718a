"""Experiments: the list, and one experiment's metrics, distributions and summary results."""

from __future__ import annotations

from assay.store.read import experiments as stored
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.metrics import metric_keys
from assay.ui.errors import BadRequest
from assay.ui.models import (
    ExperimentDetail,
    ExperimentList,
    ExperimentSummary,
    LatencyStat,
    ResultView,
)
from assay.ui.queries._sql import loads, offset
from assay.ui.queries.metrics import metrics_and_histograms
from assay.ui.queries.stored import stored_latency, stored_means

__all__ = [
    "experiment_detail",
    "find_experiment",
    "list_experiments",
    "metric_keys",
    "summary_from",
    "summary_results",
]


EXPERIMENT_SORTS = stored.SORTS
"""The experiment list's sorts (and ``metric:<key>``, a metric's mean)."""


def list_experiments(
    db: ReadOnlyDatabase,
    *,
    q: str | None = None,
    dataset_id: str | None = None,
    page: int = 1,
    per_page: int = 50,
    sort: str = "created",
    order: str = "desc",
) -> ExperimentList:
    total = stored.count(db, q=q, dataset_id=dataset_id)
    if sort.startswith("metric:"):  # means are per experiment: sorted here, over every match
        summaries = [summary_from(row) for row in stored.every(db, q=q, dataset_id=dataset_id)]
        _attach_means(db, summaries)  # ties stay newest first
        summaries = _by_metric(summaries, sort.removeprefix("metric:"), order)
        summaries = summaries[offset(page, per_page) : offset(page, per_page) + per_page]
    else:
        _check_sort(sort)
        rows = stored.page(
            db,
            q=q,
            dataset_id=dataset_id,
            sort=sort,
            descending=order != "asc",
            limit=per_page,
            offset=offset(page, per_page),
        )
        summaries = [summary_from(row) for row in rows]
        _attach_means(db, summaries)
    _attach_summary_scores(db, summaries)
    return ExperimentList(
        q=q,
        dataset_id=dataset_id,
        total=total,
        page=page,
        per_page=per_page,
        experiments=summaries,
        sort=sort,
        order="asc" if order == "asc" else "desc",
    )


def _check_sort(sort: str) -> None:
    if sort not in EXPERIMENT_SORTS:
        accepted = ", ".join([*EXPERIMENT_SORTS, "metric:<key>"])
        raise BadRequest(f"unknown sort {sort!r}; accepted: {accepted}")


def _by_metric(summaries: list[ExperimentSummary], key: str, order: str) -> list[ExperimentSummary]:
    """By the metric's mean; experiments without it last, whichever the order."""
    having = [s for s in summaries if s.metric_means.get(key) is not None]
    without = [s for s in summaries if s.metric_means.get(key) is None]
    having.sort(key=lambda s: s.metric_means[key] or 0.0, reverse=order != "asc")
    return having + without


def _attach_summary_scores(db: ReadOnlyDatabase, summaries: list[ExperimentSummary]) -> None:
    """Each experiment's summary evaluators' scores (a pass rate, an F1...)."""
    by_id = {s.id: s for s in summaries}
    for experiment_id, key, score in stored.summary_scores(db, list(by_id)):
        by_id[experiment_id].summary_scores[key] = score


def find_experiment(db: ReadOnlyDatabase, ref: str, *, with_means: bool = False) -> ExperimentSummary | None:
    """An experiment by id or by name (its metric means only when asked: pages that show
    metrics compute richer statistics themselves)."""
    row = stored.find(db, ref)
    if row is None:
        return None
    summary = summary_from(row)
    if with_means:
        _attach_means(db, [summary])
    return summary


def experiment_detail(db: ReadOnlyDatabase, experiment: ExperimentSummary) -> ExperimentDetail:
    found = stored.details(db, experiment.id)
    assert found is not None, "the experiment was found a moment ago"
    metrics, histograms = metrics_and_histograms(db, experiment.id)
    means = {metric.key: metric.mean for metric in metrics}  # as the list shows, at no extra query
    return ExperimentDetail(
        experiment=experiment.model_copy(update={"metric_means": means}),
        description=found.description,
        metadata=loads(found.metadata),
        config=loads(found.config),
        metrics=metrics,
        histograms=histograms,
        summary_results=summary_results(db, experiment.id),
        latency=_latency(db, experiment.id),
    )


def summary_results(db: ReadOnlyDatabase, experiment_id: str) -> list[ResultView]:
    return [
        ResultView(
            key=row.key,
            score=row.score,
            value=loads(row.value),
            feedback=row.feedback,
            comment=row.comment,
            metadata=loads(row.metadata),
            error=row.error,
        )
        for row in stored.summary_results(db, experiment_id)
    ]


def _latency(db: ReadOnlyDatabase, experiment_id: str) -> LatencyStat:
    kept = stored_latency(db, experiment_id)
    if kept is not None:
        return kept
    counted = stored.latency(db, experiment_id)
    return LatencyStat(mean_ms=counted.mean, max_ms=counted.max)


def _attach_means(db: ReadOnlyDatabase, summaries: list[ExperimentSummary]) -> None:
    if not summaries:
        return
    kept = stored_means(db, [s.id for s in summaries])
    for summary in summaries:
        summary.metric_means.update(kept.get(summary.id, {}))
    by_id = {s.id: s for s in summaries if s.id not in kept}
    for experiment_id, key, mean in stored.computed_means(db, list(by_id)):
        by_id[experiment_id].metric_means[key] = mean


def summary_from(row: stored.ExperimentRecord) -> ExperimentSummary:
    return ExperimentSummary(
        id=row.id,
        name=row.name,
        dataset_id=row.dataset_id,
        dataset_name=row.dataset_name,
        dataset_version=row.dataset_version,
        status=row.status,
        created_at=row.created_at,
        finished_at=row.finished_at,
        rows=row.row_count,
        run_errors=row.run_errors,
        num_examples=row.num_examples,
        num_repetitions=row.num_repetitions,
    )
