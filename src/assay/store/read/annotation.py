"""What annotation reads: people's feedback records, the feedback keys stored in
metadata, and the rows of an annotation queue."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.sql import in_list, records

__all__ = [
    "FeedbackRecord",
    "feedback_records",
    "has_feedback",
    "queue_run_ids",
    "queue_standing",
    "run_feedback",
    "stored_metadata",
]


@dataclass(frozen=True, slots=True)
class FeedbackRecord:
    """A stored feedback row, its JSON columns as stored text."""

    run_id: str | None
    key: str
    score: Any  # a number in SQLite, JSON text in PostgreSQL
    value: str | None
    comment: str | None
    correction: str | None
    feedback_source: str | None
    created_at: str


def has_feedback(db: ReadOnlyDatabase) -> bool:
    """A store made before feedback existed has no feedback table."""
    found = db.query_one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'feedback'")
    return found is not None


def feedback_records(
    db: ReadOnlyDatabase, experiment_ids: Sequence[str], run_ids: Sequence[str] | None = None
) -> list[FeedbackRecord]:
    """Feedback on these experiments (these runs only), oldest first."""
    if not experiment_ids or (run_ids is not None and not run_ids) or not has_feedback(db):
        return []
    marks, params = in_list(list(experiment_ids))
    where = f"experiment_id IN {marks}"
    if run_ids is not None:
        run_marks, run_params = in_list(list(run_ids))
        where, params = f"run_id IN {run_marks} AND {where}", (*run_params, *params)
    rows = db.query(
        "SELECT run_id, key, score, value, comment, correction, feedback_source, created_at "
        f"FROM feedback WHERE {where} ORDER BY created_at, id",
        params,
    )
    return records(FeedbackRecord, rows)


def run_feedback(db: ReadOnlyDatabase, run_id: str) -> list[FeedbackRecord]:
    """Feedback on one run, oldest first (none in a store made before feedback existed)."""
    if not has_feedback(db):
        return []
    rows = db.query(
        "SELECT run_id, key, score, value, comment, correction, feedback_source, created_at "
        "FROM feedback WHERE run_id = ? ORDER BY created_at",
        (run_id,),
    )
    return records(FeedbackRecord, rows)


Level = Literal["experiments", "datasets"]
_METADATA = {
    "experiments": "SELECT metadata FROM experiments WHERE id = ?",
    "datasets": "SELECT metadata FROM datasets WHERE id = ?",
}


def stored_metadata(db: ReadOnlyDatabase, level: Level, record_id: str) -> str | None:
    """An experiment's or a dataset's metadata JSON text (None: none, or no such record)."""
    row = db.query_one(_METADATA[level], (record_id,))
    return None if row is None else row["metadata"]


def queue_standing(db: ReadOnlyDatabase, experiment_id: str) -> tuple[Any, ...] | None:
    """What changes when an experiment's rows may have (its status, end and row count);
    None while it runs."""
    row = db.query_one(
        "SELECT x.status, x.finished_at, (SELECT COUNT(*) FROM runs u WHERE u.experiment_id = x.id) "
        "FROM experiments x WHERE x.id = ?",
        (experiment_id,),
    )
    return None if row is None or row[0] == "running" else tuple(row)


# Rows whose target or an evaluator failed, or that scored below 1.
_FAILED = (
    "(u.error IS NOT NULL OR EXISTS (SELECT 1 FROM results r WHERE r.run_id = u.id "
    "AND (r.error IS NOT NULL OR r.score < 1)))"
)
# Rows where one evaluator passes at 0.5 and another does not.
_DISAGREE = (
    "EXISTS (SELECT 1 FROM results r WHERE r.run_id = u.id AND r.error IS NULL "
    "AND r.score >= 0.5 AND r.score <= 1) AND EXISTS (SELECT 1 FROM results r WHERE "
    "r.run_id = u.id AND r.error IS NULL AND r.score >= 0 AND r.score < 0.5)"
)
_RULES = {"all": "1 = 1", "random": "1 = 1", "failed": _FAILED, "disagree": _DISAGREE}


def queue_run_ids(db: ReadOnlyDatabase, experiment_ids: Sequence[str], rule: str) -> list[str]:
    """The run ids a queue's ``rule`` keeps (``all``, ``random``, ``failed``,
    ``disagree``, ``unsure``), the experiments in the order given, then in data order;
    ``unsure``: a [0, 1] score nearest 0.5 first."""
    marks, params = in_list(list(experiment_ids))
    order = _experiment_order(experiment_ids)
    if rule == "unsure":
        sql = (
            "SELECT u.id FROM runs u JOIN results r ON r.run_id = u.id "
            f"WHERE u.experiment_id IN {marks} AND r.error IS NULL AND r.score >= 0 AND r.score <= 1 "
            "GROUP BY u.id, u.experiment_id, u.position, u.repetition "
            f"ORDER BY MIN(ABS(r.score - 0.5)), {order}, u.position, u.repetition"
        )
    else:
        sql = (
            f"SELECT u.id FROM runs u WHERE u.experiment_id IN {marks} AND {_RULES[rule]} "
            f"ORDER BY {order}, u.position, u.repetition"
        )
    return [row["id"] for row in db.query(sql, params)]


def _experiment_order(ids: Sequence[str]) -> str:
    """The experiments in the order given (their position, as parameters-free SQL: the
    ids are written as numbered cases, never as text)."""
    if len(ids) <= 1:
        return "u.experiment_id"
    cases = " ".join(f"WHEN {_quoted(i)} THEN {n}" for n, i in enumerate(ids))
    return f"CASE u.experiment_id {cases} END"


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
