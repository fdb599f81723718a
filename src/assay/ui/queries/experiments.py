"""Experiments: the list, and one experiment's metrics, distributions and summary results."""

from __future__ import annotations

from typing import Any

from assay.store.read.database import ReadOnlyDatabase
from assay.ui.errors import BadRequest
from assay.ui.models import (
    ExperimentDetail,
    ExperimentList,
    ExperimentSummary,
    LatencyStat,
    ResultView,
)
from assay.ui.queries._sql import in_list, like_pattern, loads, offset
from assay.ui.queries.metrics import metrics_and_histograms
from assay.ui.queries.stored import has_stats, stored_latency, stored_means

__all__ = [
    "experiment_detail",
    "find_experiment",
    "list_experiments",
    "metric_keys",
    "summary_from",
    "summary_results",
]


# Stored counts when the experiment has them (COALESCE only runs the count without).
_SUMMARY = """
SELECT x.*, d.name AS dataset_name,
       COALESCE(s.row_count, (SELECT COUNT(*) FROM runs r WHERE r.experiment_id = x.id))
           AS row_count,
       COALESCE(s.run_errors, (SELECT COUNT(*) FROM runs r WHERE r.experiment_id = x.id
           AND r.error IS NOT NULL)) AS run_errors
FROM experiments x LEFT JOIN datasets d ON d.id = x.dataset_id
LEFT JOIN experiment_stats s ON s.experiment_id = x.id
"""


EXPERIMENT_SORTS = {
    "created": "x.created_at",
    "name": "x.name",
    "dataset": "d.name",
    "status": "x.status",
    "rows": "row_count",
    "errors": "run_errors",
}
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
    where, params = "1 = 1", []
    if q:
        where += " AND x.name LIKE ? ESCAPE '\\'"
        params.append(like_pattern(q))
    if dataset_id:
        where += " AND x.dataset_id = ?"
        params.append(dataset_id)
    total = db.query(f"SELECT COUNT(*) FROM experiments x WHERE {where}", params)[0][0]
    if sort.startswith("metric:"):  # means are per experiment: sorted here, over every match
        every = db.query(f"{_SUMMARY} WHERE {where} ORDER BY x.created_at DESC, x.name", params)
        summaries = [summary_from(row) for row in every]  # ties stay newest first
        _attach_means(db, summaries)
        summaries = _by_metric(summaries, sort.removeprefix("metric:"), order)
        summaries = summaries[offset(page, per_page) : offset(page, per_page) + per_page]
    else:
        rows = db.query(
            f"{_SUMMARY} WHERE {where} ORDER BY {_order(sort, order)} LIMIT ? OFFSET ?",
            [*params, per_page, offset(page, per_page)],
        )
        summaries = [summary_from(row) for row in rows]
        _attach_means(db, summaries)
    _attach_summary_scores(db, summaries)
    return ExperimentList(
        q=q,
        dataset_id=dataset_id,
        total=int(total),
        page=page,
        per_page=per_page,
        experiments=summaries,
        sort=sort,
        order="asc" if order == "asc" else "desc",
    )


def _order(sort: str, order: str) -> str:
    column = EXPERIMENT_SORTS.get(sort)
    if column is None:
        accepted = ", ".join([*EXPERIMENT_SORTS, "metric:<key>"])
        raise BadRequest(f"unknown sort {sort!r}; accepted: {accepted}")
    direction = "ASC" if order == "asc" else "DESC"
    return f"{column} {direction}, x.created_at DESC, x.name"


def _by_metric(summaries: list[ExperimentSummary], key: str, order: str) -> list[ExperimentSummary]:
    """By the metric's mean; experiments without it last, whichever the order."""
    having = [s for s in summaries if s.metric_means.get(key) is not None]
    without = [s for s in summaries if s.metric_means.get(key) is None]
    having.sort(key=lambda s: s.metric_means[key] or 0.0, reverse=order != "asc")
    return having + without


def _attach_summary_scores(db: ReadOnlyDatabase, summaries: list[ExperimentSummary]) -> None:
    """Each experiment's summary evaluators' scores (a pass rate, an F1...)."""
    if not summaries:
        return
    ids, params = in_list([s.id for s in summaries])
    by_id = {s.id: s for s in summaries}
    for row in db.query(
        f"SELECT experiment_id, key, score FROM summary_results WHERE experiment_id IN {ids} ORDER BY pk",
        params,
    ):
        by_id[row["experiment_id"]].summary_scores[row["key"]] = row["score"]


def find_experiment(db: ReadOnlyDatabase, ref: str, *, with_means: bool = False) -> ExperimentSummary | None:
    """An experiment by id or by name (its metric means only when asked: pages that show
    metrics compute richer statistics themselves)."""
    row = db.query_one(f"{_SUMMARY} WHERE x.id = ? OR x.name = ? LIMIT 1", (ref, ref))
    if row is None:
        return None
    summary = summary_from(row)
    if with_means:
        _attach_means(db, [summary])
    return summary


def experiment_detail(db: ReadOnlyDatabase, experiment: ExperimentSummary) -> ExperimentDetail:
    row = db.query_one("SELECT description, metadata, config FROM experiments WHERE id = ?", (experiment.id,))
    assert row is not None, "the experiment was found a moment ago"
    metrics, histograms = metrics_and_histograms(db, experiment.id)
    means = {metric.key: metric.mean for metric in metrics}  # as the list shows, at no extra query
    return ExperimentDetail(
        experiment=experiment.model_copy(update={"metric_means": means}),
        description=row["description"],
        metadata=loads(row["metadata"]),
        config=loads(row["config"]),
        metrics=metrics,
        histograms=histograms,
        summary_results=summary_results(db, experiment.id),
        latency=_latency(db, experiment.id),
    )


def metric_keys(db: ReadOnlyDatabase, experiment_id: str) -> list[str]:
    """Metric keys in the order evaluators first produced them (stored, else index-only)."""
    if has_stats(db, experiment_id):
        stored = db.query(
            "SELECT key FROM metric_stats WHERE experiment_id = ? ORDER BY ordinal", (experiment_id,)
        )
        return [row["key"] for row in stored]
    rows = db.query(
        "SELECT key FROM results WHERE experiment_id = ? GROUP BY key ORDER BY MIN(pk)",
        (experiment_id,),
    )
    return [row["key"] for row in rows]


def summary_results(db: ReadOnlyDatabase, experiment_id: str) -> list[ResultView]:
    rows = db.query("SELECT * FROM summary_results WHERE experiment_id = ? ORDER BY pk", (experiment_id,))
    return [
        ResultView(
            key=row["key"],
            score=row["score"],
            value=loads(row["value"]),
            feedback=row["feedback"],
            comment=row["comment"],
            metadata=loads(row["metadata"]),
            error=row["error"],
        )
        for row in rows
    ]


def _latency(db: ReadOnlyDatabase, experiment_id: str) -> LatencyStat:
    stored = stored_latency(db, experiment_id)
    if stored is not None:
        return stored
    row = db.query_one(
        "SELECT AVG(latency_ms) AS mean, MAX(latency_ms) AS max FROM runs WHERE experiment_id = ?",
        (experiment_id,),
    )
    return LatencyStat(mean_ms=row["mean"] if row else None, max_ms=row["max"] if row else None)


def _attach_means(db: ReadOnlyDatabase, summaries: list[ExperimentSummary]) -> None:
    if not summaries:
        return
    stored = stored_means(db, [s.id for s in summaries])
    for summary in summaries:
        summary.metric_means.update(stored.get(summary.id, {}))
    summaries = [s for s in summaries if s.id not in stored]
    if not summaries:
        return
    ids, params = in_list([s.id for s in summaries])
    # AVG(score) reads only the (experiment_id, key, score) index; errored results store
    # a NULL score, so they stay out of the mean.
    rows = db.query(
        f"SELECT experiment_id, key, AVG(score) AS mean FROM results "
        f"WHERE experiment_id IN {ids} GROUP BY experiment_id, key ORDER BY MIN(pk)",
        params,
    )
    by_id = {s.id: s for s in summaries}
    for row in rows:
        by_id[row["experiment_id"]].metric_means[row["key"]] = row["mean"]


def summary_from(row: Any) -> ExperimentSummary:
    return ExperimentSummary(
        id=row["id"],
        name=row["name"],
        dataset_id=row["dataset_id"],
        dataset_name=row["dataset_name"],
        dataset_version=row["dataset_version"],
        status=row["status"],
        created_at=row["created_at"],
        finished_at=row["finished_at"],
        rows=row["row_count"],
        run_errors=row["run_errors"],
        num_examples=row["num_examples"],
        num_repetitions=row["num_repetitions"],
    )
