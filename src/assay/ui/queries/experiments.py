"""Experiments: the list, and one experiment's metrics, distributions and summary results."""

from __future__ import annotations

from typing import Any, Optional

from assay.ui.db import ReadOnlyDatabase
from assay.ui.models import (
    ExperimentDetail,
    ExperimentList,
    ExperimentSummary,
    Histogram,
    HistogramBin,
    LatencyStat,
    MetricStat,
    ResultView,
)
from assay.ui.queries._sql import in_list, like_pattern, loads, offset
from assay.ui.stats import clustered_interval

BINS = 10

_SUMMARY = """
SELECT x.*, d.name AS dataset_name,
       (SELECT COUNT(*) FROM runs r WHERE r.experiment_id = x.id) AS row_count,
       (SELECT COUNT(*) FROM runs r WHERE r.experiment_id = x.id AND r.error IS NOT NULL)
           AS run_errors
FROM experiments x LEFT JOIN datasets d ON d.id = x.dataset_id
"""

# An errored result never counts as a score, even if an evaluator left one behind.
_SCORE = "CASE WHEN error IS NULL THEN score END"

_METRICS = f"""
WITH m AS (
    SELECT key, MIN(pk) AS first_pk, AVG({_SCORE}) AS mean, COUNT({_SCORE}) AS n,
           SUM(error IS NOT NULL) AS errors, SUM(error IS NULL AND score IS NULL) AS unscored,
           MIN({_SCORE}) AS lo, MAX({_SCORE}) AS hi
    FROM results WHERE experiment_id = ? GROUP BY key
),
c AS (
    SELECT r.key, SUM(r.score - m.mean) AS residual
    FROM results r JOIN m ON m.key = r.key JOIN runs u ON u.id = r.run_id
    WHERE r.experiment_id = ? AND r.error IS NULL AND r.score IS NOT NULL
    GROUP BY r.key, u.example_id
),
g AS (SELECT key, COUNT(*) AS groups, SUM(residual * residual) AS ss FROM c GROUP BY key)
SELECT m.*, g.groups, g.ss FROM m LEFT JOIN g ON g.key = m.key ORDER BY m.first_pk
"""

_HISTOGRAM = f"""
WITH b AS (
    SELECT key, MIN({_SCORE}) AS lo, MAX({_SCORE}) AS hi FROM results
    WHERE experiment_id = ? GROUP BY key
)
SELECT r.key,
       CASE WHEN b.lo >= 0 AND b.hi <= 1 THEN MIN(CAST(r.score * {BINS} AS INTEGER), {BINS - 1})
            WHEN b.hi = b.lo THEN 0
            ELSE MIN(CAST((r.score - b.lo) * {BINS} / (b.hi - b.lo) AS INTEGER), {BINS - 1})
       END AS bin,
       COUNT(*) AS count
FROM results r JOIN b ON b.key = r.key
WHERE r.experiment_id = ? AND r.error IS NULL AND r.score IS NOT NULL
GROUP BY r.key, bin
"""


def list_experiments(
    db: ReadOnlyDatabase,
    *,
    q: Optional[str] = None,
    dataset_id: Optional[str] = None,
    page: int = 1,
    per_page: int = 50,
) -> ExperimentList:
    where, params = "1 = 1", []
    if q:
        where += " AND x.name LIKE ? ESCAPE '\\'"
        params.append(like_pattern(q))
    if dataset_id:
        where += " AND x.dataset_id = ?"
        params.append(dataset_id)
    total = db.query(f"SELECT COUNT(*) FROM experiments x WHERE {where}", params)[0][0]
    rows = db.query(
        f"{_SUMMARY} WHERE {where} ORDER BY x.created_at DESC, x.name LIMIT ? OFFSET ?",
        [*params, per_page, offset(page, per_page)],
    )
    summaries = [summary_from(row) for row in rows]
    _attach_means(db, summaries)
    return ExperimentList(
        q=q, dataset_id=dataset_id, total=int(total), page=page, per_page=per_page,
        experiments=summaries,
    )


def find_experiment(db: ReadOnlyDatabase, ref: str) -> Optional[ExperimentSummary]:
    """An experiment by id or by name, with its metric means."""
    row = db.query_one(f"{_SUMMARY} WHERE x.id = ? OR x.name = ? LIMIT 1", (ref, ref))
    if row is None:
        return None
    summary = summary_from(row)
    _attach_means(db, [summary])
    return summary


def experiment_detail(db: ReadOnlyDatabase, experiment: ExperimentSummary) -> ExperimentDetail:
    row = db.query_one(
        "SELECT description, metadata, config FROM experiments WHERE id = ?", (experiment.id,)
    )
    assert row is not None, "the experiment was found a moment ago"
    metrics = metric_stats(db, experiment.id)
    return ExperimentDetail(
        experiment=experiment, description=row["description"], metadata=loads(row["metadata"]),
        config=loads(row["config"]), metrics=metrics, histograms=histograms(db, experiment.id, metrics),
        summary_results=summary_results(db, experiment.id), latency=_latency(db, experiment.id),
    )


def metric_stats(db: ReadOnlyDatabase, experiment_id: str) -> list[MetricStat]:
    """Per metric: mean, 95% CI clustered by example, errors counted apart."""
    stats = []
    for row in db.query(_METRICS, (experiment_id, experiment_id)):
        interval = clustered_interval(row["mean"], row["n"], row["groups"] or 0, row["ss"])
        lo, hi = row["lo"], row["hi"]
        stats.append(
            MetricStat(
                key=row["key"], mean=row["mean"], n=row["n"], errors=row["errors"],
                unscored=row["unscored"], stderr=interval.stderr, ci_low=interval.low,
                ci_high=interval.high, min=lo, max=hi,
                unit_range=lo is not None and lo >= 0 and hi <= 1,
            )
        )
    return stats


def metric_keys(db: ReadOnlyDatabase, experiment_id: str) -> list[str]:
    """Metric keys in the order evaluators first produced them (index-only)."""
    rows = db.query(
        "SELECT key FROM results WHERE experiment_id = ? GROUP BY key ORDER BY MIN(pk)",
        (experiment_id,),
    )
    return [row["key"] for row in rows]


def histograms(
    db: ReadOnlyDatabase, experiment_id: str, metrics: list[MetricStat]
) -> list[Histogram]:
    counts: dict[str, dict[int, int]] = {}
    for row in db.query(_HISTOGRAM, (experiment_id, experiment_id)):
        counts.setdefault(row["key"], {})[int(row["bin"])] = int(row["count"])
    return [_histogram(metric, counts.get(metric.key, {})) for metric in metrics]


def _histogram(metric: MetricStat, counts: dict[int, int]) -> Histogram:
    if metric.min is None or metric.max is None:
        return Histogram(key=metric.key, bins=[], errors=metric.errors)
    low, high = (0.0, 1.0) if metric.unit_range else (metric.min, metric.max)
    if high == low:
        bins = [HistogramBin(low=low, high=high, count=counts.get(0, 0))]
    else:
        width = (high - low) / BINS
        bins = [
            HistogramBin(low=low + i * width, high=low + (i + 1) * width, count=counts.get(i, 0))
            for i in range(BINS)
        ]
    return Histogram(key=metric.key, bins=bins, errors=metric.errors)


def summary_results(db: ReadOnlyDatabase, experiment_id: str) -> list[ResultView]:
    rows = db.query(
        "SELECT * FROM summary_results WHERE experiment_id = ? ORDER BY pk", (experiment_id,)
    )
    return [
        ResultView(
            key=row["key"], score=row["score"], value=loads(row["value"]),
            feedback=row["feedback"], comment=row["comment"], metadata=loads(row["metadata"]),
            error=row["error"],
        )
        for row in rows
    ]


def _latency(db: ReadOnlyDatabase, experiment_id: str) -> LatencyStat:
    row = db.query_one(
        "SELECT AVG(latency_ms) AS mean, MAX(latency_ms) AS max FROM runs WHERE experiment_id = ?",
        (experiment_id,),
    )
    return LatencyStat(mean_ms=row["mean"] if row else None, max_ms=row["max"] if row else None)


def _attach_means(db: ReadOnlyDatabase, summaries: list[ExperimentSummary]) -> None:
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
        id=row["id"], name=row["name"], dataset_id=row["dataset_id"],
        dataset_name=row["dataset_name"], dataset_version=row["dataset_version"],
        status=row["status"], created_at=row["created_at"], finished_at=row["finished_at"],
        rows=row["row_count"], run_errors=row["run_errors"], num_examples=row["num_examples"],
        num_repetitions=row["num_repetitions"],
    )
