"""Experiments as the UI lists them: their summaries (stored counts where kept), their
details, summary results and latency, and their metric means."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.sql import in_list, like_pattern, record, records

__all__ = [
    "SORTS",
    "ExperimentDetails",
    "ExperimentRecord",
    "LatencyAggregate",
    "SummaryResultRecord",
    "computed_means",
    "count",
    "details",
    "every",
    "find",
    "latency",
    "newest_ids",
    "page",
    "summary_results",
    "summary_scores",
]


@dataclass(frozen=True, slots=True)
class ExperimentRecord:
    id: str
    name: str
    dataset_id: str | None
    dataset_name: str | None
    dataset_version: int | None
    status: str
    created_at: str | None
    finished_at: str | None
    row_count: int
    run_errors: int  # rows whose target call failed
    num_examples: int
    num_repetitions: int


@dataclass(frozen=True, slots=True)
class ExperimentDetails:
    """An experiment's description and its JSON columns as stored text."""

    description: str | None
    metadata: str | None
    config: str | None


@dataclass(frozen=True, slots=True)
class SummaryResultRecord:
    key: str
    score: float | None
    value: str | None
    feedback: str | None
    comment: str | None
    metadata: str | None
    error: str | None


@dataclass(frozen=True, slots=True)
class LatencyAggregate:
    mean: float | None
    max: float | None


# Stored counts when the experiment has them (COALESCE only runs the count without).
_SUMMARY = """
SELECT x.id, x.name, x.dataset_id, d.name AS dataset_name, x.dataset_version, x.status,
       x.created_at, x.finished_at, x.num_examples, x.num_repetitions,
       COALESCE(s.row_count, (SELECT COUNT(*) FROM runs r WHERE r.experiment_id = x.id))
           AS row_count,
       COALESCE(s.run_errors, (SELECT COUNT(*) FROM runs r WHERE r.experiment_id = x.id
           AND r.error IS NOT NULL)) AS run_errors
FROM experiments x LEFT JOIN datasets d ON d.id = x.dataset_id
LEFT JOIN experiment_stats s ON s.experiment_id = x.id
"""

SORTS = {
    "created": "x.created_at",
    "name": "x.name",
    "dataset": "d.name",
    "status": "x.status",
    "rows": "row_count",
    "errors": "run_errors",
}
"""The orders ``page`` reads experiments in (each a column of the summary)."""


def _where(q: str | None, dataset_id: str | None) -> tuple[str, list[Any]]:
    where, params = "1 = 1", []
    if q:
        where += " AND x.name LIKE ? ESCAPE '\\'"
        params.append(like_pattern(q))
    if dataset_id:
        where += " AND x.dataset_id = ?"
        params.append(dataset_id)
    return where, params


def count(db: ReadOnlyDatabase, *, q: str | None, dataset_id: str | None) -> int:
    """Experiments whose name holds ``q`` (on the dataset ``dataset_id``)."""
    where, params = _where(q, dataset_id)
    return int(db.query(f"SELECT COUNT(*) FROM experiments x WHERE {where}", params)[0][0])


def every(db: ReadOnlyDatabase, *, q: str | None, dataset_id: str | None) -> list[ExperimentRecord]:
    """Every experiment ``count`` counts, newest first."""
    where, params = _where(q, dataset_id)
    return records(
        ExperimentRecord, db.query(f"{_SUMMARY} WHERE {where} ORDER BY x.created_at DESC, x.name", params)
    )


def page(
    db: ReadOnlyDatabase,
    *,
    q: str | None,
    dataset_id: str | None,
    sort: str,
    descending: bool,
    limit: int,
    offset: int,
) -> list[ExperimentRecord]:
    """A page of what ``count`` counts, by ``sort`` (a key of ``SORTS``), ties newest first."""
    where, params = _where(q, dataset_id)
    order = f"{SORTS[sort]} {'DESC' if descending else 'ASC'}, x.created_at DESC, x.name"
    rows = db.query(f"{_SUMMARY} WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?", [*params, limit, offset])
    return records(ExperimentRecord, rows)


def find(db: ReadOnlyDatabase, ref: str) -> ExperimentRecord | None:
    """An experiment by id or by name."""
    return record(
        ExperimentRecord, db.query_one(f"{_SUMMARY} WHERE x.id = ? OR x.name = ? LIMIT 1", (ref, ref))
    )


def newest_ids(db: ReadOnlyDatabase, dataset_id: str, limit: int) -> list[str]:
    """The ids of the dataset's ``limit`` newest experiments, newest first."""
    rows = db.query(
        "SELECT id FROM experiments WHERE dataset_id = ? ORDER BY created_at DESC, name LIMIT ?",
        (dataset_id, limit),
    )
    return [row["id"] for row in rows]


def details(db: ReadOnlyDatabase, experiment_id: str) -> ExperimentDetails | None:
    row = db.query_one("SELECT description, metadata, config FROM experiments WHERE id = ?", (experiment_id,))
    return record(ExperimentDetails, row)


def summary_results(db: ReadOnlyDatabase, experiment_id: str) -> list[SummaryResultRecord]:
    """The summary evaluators' results, in the order they were written."""
    rows = db.query(
        "SELECT key, score, value, feedback, comment, metadata, error FROM summary_results "
        "WHERE experiment_id = ? ORDER BY pk",
        (experiment_id,),
    )
    return records(SummaryResultRecord, rows)


def summary_scores(db: ReadOnlyDatabase, experiment_ids: list[str]) -> list[tuple[str, str, float | None]]:
    """(experiment id, key, score) of the experiments' summary results, in written order."""
    if not experiment_ids:
        return []
    ids, params = in_list(experiment_ids)
    rows = db.query(
        f"SELECT experiment_id, key, score FROM summary_results WHERE experiment_id IN {ids} ORDER BY pk",
        params,
    )
    return [(row["experiment_id"], row["key"], row["score"]) for row in rows]


def latency(db: ReadOnlyDatabase, experiment_id: str) -> LatencyAggregate:
    """Mean and largest latency of the runs, counted (``figures`` has it stored)."""
    row = db.query_one(
        "SELECT AVG(latency_ms) AS mean, MAX(latency_ms) AS max FROM runs WHERE experiment_id = ?",
        (experiment_id,),
    )
    return LatencyAggregate(row["mean"], row["max"]) if row else LatencyAggregate(None, None)


def computed_means(db: ReadOnlyDatabase, experiment_ids: list[str]) -> list[tuple[str, str, float | None]]:
    """(experiment id, key, mean score) counted over the results, keys in first-seen order."""
    if not experiment_ids:
        return []
    ids, params = in_list(experiment_ids)
    # AVG(score) reads only the (experiment_id, key, score) index; errored results store
    # a NULL score, so they stay out of the mean.
    rows = db.query(
        f"SELECT experiment_id, key, AVG(score) AS mean FROM results "
        f"WHERE experiment_id IN {ids} GROUP BY experiment_id, key ORDER BY MIN(pk)",
        params,
    )
    return [(row["experiment_id"], row["key"], row["mean"]) for row in rows]
