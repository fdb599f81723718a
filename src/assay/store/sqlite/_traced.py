"""Runs traced outside an experiment's rows, for the SQLite store (and PostgreSQL's, which
runs the same queries).

``Client.create_run`` / ``update_run`` write them: LangSmith's tracing projects, where a
run is posted when it starts and patched when it ends, children before or after their
parents. Each run is one row; the tree is put together when it is read.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from typing import Any

from assay.schemas import Run
from assay.store import _codec as codec
from assay.store._json import dumps, loads

TRACED_PAGE = 500
"""Traced runs read at once when a project's runs are listed."""

# Kept in their own columns (what the queries select on), not in the ``run`` JSON.
_COLUMNS = ("id", "session_id", "trace_id", "parent_run_id", "start_time", "child_runs")


class SQLiteTracedRuns:
    """Mixed into ``SQLiteStore``; uses its ``conn``, ``transaction`` and ``_LOCK_FOR_WRITE``."""

    _LOCK_FOR_WRITE: str  # provided by SQLiteStore (PostgreSQL's: FOR UPDATE)

    @property
    def conn(self) -> sqlite3.Connection:
        raise NotImplementedError  # provided by SQLiteStore

    def transaction(self) -> Any:
        raise NotImplementedError  # provided by SQLiteStore

    def add_traced_run(self, experiment_id: uuid.UUID, run: Run) -> bool:
        """Store ``run`` (its child runs apart) in the experiment; False, and nothing
        changed, when a run of that id is stored already (LangSmith ignores a post twice)."""
        return bool(self.add_traced_runs(experiment_id, [run]))

    def add_traced_runs(self, experiment_id: uuid.UUID, runs: Sequence[Run]) -> int:
        """Store ``runs`` (a whole trace, say) in one transaction, each apart from its
        child runs; a run whose id is stored already is left as it is. Returns how many
        were new."""
        added = 0
        with self.transaction() as conn:
            for run in runs:
                cursor = conn.execute(
                    "INSERT INTO traced_runs (id, experiment_id, trace_id, parent_run_id, start_time, run) "
                    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                    (
                        str(run.id),
                        str(experiment_id),
                        str(run.trace_id or run.id),
                        None if run.parent_run_id is None else str(run.parent_run_id),
                        _sortable(run.start_time),
                        _payload(run),
                    ),
                )
                added += cursor.rowcount
        return added

    def update_traced_run(self, run_id: uuid.UUID, fields: dict[str, Any]) -> bool:
        """Replace ``fields`` of a stored traced run (read and written in one transaction);
        False if there is no such run."""
        with self.transaction() as conn:
            row = conn.execute(
                f"SELECT * FROM traced_runs WHERE id = ?{self._LOCK_FOR_WRITE}", (str(run_id),)
            ).fetchone()  # locked until the write: a concurrent patch waits, and loses nothing
            if row is None:
                return False
            run = _run_from(row).model_copy(update=fields)
            conn.execute(
                "UPDATE traced_runs SET start_time = ?, run = ? WHERE id = ?",
                (_sortable(run.start_time), _payload(run), str(run_id)),
            )
        return True

    def get_traced_run(self, run_id: uuid.UUID) -> Run | None:
        """A traced run by id, without its children (None if there is none)."""
        row = self.conn.execute("SELECT * FROM traced_runs WHERE id = ?", (str(run_id),)).fetchone()
        return None if row is None else _run_from(row)

    def list_traced_runs(
        self, experiment_id: uuid.UUID | None = None, trace_id: uuid.UUID | None = None
    ) -> list[Run]:
        """The traced runs of an experiment, or of a trace, oldest first (flat: each run
        names its parent)."""
        return list(self.iter_traced_runs(experiment_id, trace_id))

    def iter_traced_runs(
        self, experiment_id: uuid.UUID | None = None, trace_id: uuid.UUID | None = None
    ) -> Iterator[Run]:
        """``list_traced_runs`` a page at a time (``TRACED_PAGE`` rows held at once), each
        page the next range of the index after the last row read."""
        if trace_id is not None:
            where, param = "trace_id = ?", str(trace_id)
        elif experiment_id is not None:
            where, param = "experiment_id = ?", str(experiment_id)
        else:
            raise ValueError("list_traced_runs needs experiment_id or trace_id")
        after: tuple[str, str] | None = None
        while True:
            rows = self._traced_page(where, param, after)
            yield from (_run_from(row) for row in rows)
            if len(rows) < TRACED_PAGE:
                return
            after = (rows[-1]["start_time"], rows[-1]["id"])

    def _traced_page(self, where: str, param: str, after: tuple[str, str] | None) -> list[Any]:
        since, params = "", [param]
        if after is not None:
            since = " AND (start_time > ? OR (start_time = ? AND id > ?))"
            params += [after[0], after[0], after[1]]
        return list(
            self.conn.execute(
                f"SELECT * FROM traced_runs WHERE {where}{since} ORDER BY start_time, id LIMIT {TRACED_PAGE}",
                params,
            ).fetchall()
        )


def _sortable(moment: datetime) -> str:
    """UTC, to the microsecond: text that sorts as the times do (a naive time is UTC)."""
    utc = moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)
    return utc.isoformat(timespec="microseconds")


def _payload(run: Run) -> str:
    fields = run.model_dump(exclude=set(_COLUMNS))
    return dumps(fields) or "{}"


def _run_from(row: Any) -> Run:
    fields = loads(row["run"]) or {}
    return Run.model_validate(
        {
            **fields,
            "id": uuid.UUID(row["id"]),
            "session_id": uuid.UUID(row["experiment_id"]),
            "trace_id": uuid.UUID(row["trace_id"]),
            "parent_run_id": codec.uid(row["parent_run_id"]),
            "start_time": codec.parse_required_ts(row["start_time"]),
        }
    )
