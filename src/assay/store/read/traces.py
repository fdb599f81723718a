"""The runs ``Client.create_run`` stored (table ``traced_runs``), as the UI reads them: a
project's traces (its root runs, newest first) and the runs of one trace."""

from __future__ import annotations

import sqlite3

from assay.store.read.database import ReadOnlyDatabase

__all__ = ["count_traces", "trace_roots", "trace_runs"]


def count_traces(db: ReadOnlyDatabase, experiment_id: str) -> int:
    row = db.query_one(
        "SELECT COUNT(*) FROM traced_runs WHERE experiment_id = ? AND parent_run_id IS NULL", (experiment_id,)
    )
    return int(row[0]) if row is not None else 0


def trace_roots(
    db: ReadOnlyDatabase, experiment_id: str, *, limit: int, offset: int = 0
) -> list[sqlite3.Row]:
    """A page of the experiment's root traced runs, newest first (``traced_runs_by_project``)."""
    return db.query(
        "SELECT * FROM traced_runs WHERE experiment_id = ? AND parent_run_id IS NULL "
        "ORDER BY start_time DESC, id LIMIT ? OFFSET ?",
        (experiment_id, limit, offset),
    )


def trace_runs(db: ReadOnlyDatabase, experiment_id: str, trace_id: str) -> list[sqlite3.Row]:
    """Every run of one trace of the experiment, oldest first (``traced_runs_by_trace``)."""
    return db.query(
        "SELECT * FROM traced_runs WHERE trace_id = ? AND experiment_id = ? ORDER BY start_time, id",
        (trace_id, experiment_id),
    )
