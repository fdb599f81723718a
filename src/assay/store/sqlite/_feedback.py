"""Feedback and run look-ups for the SQLite store, kept apart from the row machinery.

Feedback is what ``Client.create_feedback`` records on a run; ``list_feedback`` returns it
together with the evaluators' results on the same runs, which is what LangSmith calls
feedback too.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Sequence
from typing import Any

from assay.schemas import Feedback, Run
from assay.store import _codec as codec
from assay.store._json import dumps, loads

_NAMESPACE = uuid.UUID("6f1c1d3e-5b0a-4c55-9a57-6b0c2d6a1f10")


class SQLiteFeedback:
    """Mixed into ``SQLiteStore``; uses its ``conn`` and ``transaction``."""

    @property
    def conn(self) -> sqlite3.Connection:
        raise NotImplementedError  # provided by SQLiteStore

    def transaction(self) -> Any:
        raise NotImplementedError  # provided by SQLiteStore

    def add_feedback(self, feedback: Feedback) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO feedback (id, run_id, trace_id, experiment_id, key, score, value, "
                "comment, correction, feedback_source, extra, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    str(feedback.id),
                    _text(feedback.run_id),
                    _text(feedback.trace_id),
                    _text(feedback.session_id),
                    feedback.key,
                    self._stored_feedback_score(feedback.score),
                    dumps(feedback.value),
                    feedback.comment,
                    dumps(feedback.correction),
                    dumps(feedback.feedback_source),
                    dumps(feedback.extra),
                    codec.ts(feedback.created_at),
                ),
            )

    def _stored_feedback_score(self, score: Any) -> Any:
        """The score column's value (a store whose column loses int/float apart overrides it)."""
        return score

    def list_feedback(
        self, run_ids: Sequence[uuid.UUID] | None = None, keys: Sequence[str] | None = None
    ) -> list[Feedback]:
        """Created feedback, then the evaluators' results, on ``run_ids`` (all runs if None)."""
        created = [_feedback_from(row) for row in self._select("feedback", "*", run_ids, keys)]
        results = self._select(
            "results",
            "pk, experiment_id, run_id, key, score, value, comment, correction, error",
            run_ids,
            keys,
        )
        return created + [_result_as_feedback(row) for row in results]

    def get_feedback(self, feedback_id: uuid.UUID) -> Feedback | None:
        """Created feedback by id (None if there is none)."""
        rows = self._select("feedback", "*", None, None, ids=[feedback_id])
        return _feedback_from(rows[0]) if rows else None

    def update_feedback(self, feedback_id: uuid.UUID, fields: dict[str, Any]) -> bool:
        """Set ``fields`` (score, value, comment, correction) of created feedback; False if
        there is no such feedback."""
        encode = {
            "score": self._stored_feedback_score,
            "value": dumps,
            "comment": lambda comment: comment,
            "correction": dumps,
        }
        sets = ", ".join(f"{name} = ?" for name in fields)
        params = [encode[name](value) for name, value in fields.items()]
        with self.transaction() as conn:
            found = conn.execute("SELECT 1 FROM feedback WHERE id = ?", (str(feedback_id),)).fetchone()
            if found is not None and fields:
                conn.execute(f"UPDATE feedback SET {sets} WHERE id = ?", (*params, str(feedback_id)))
        return found is not None

    def delete_feedback(self, feedback_id: uuid.UUID) -> bool:
        """Delete created feedback; False if there is no such feedback."""
        with self.transaction() as conn:
            found = conn.execute("SELECT 1 FROM feedback WHERE id = ?", (str(feedback_id),)).fetchone()
            conn.execute("DELETE FROM feedback WHERE id = ?", (str(feedback_id),))
        return found is not None

    def feedback_labels(self, keys: Sequence[str]) -> list[tuple[Any, ...]]:
        """Created feedback of ``keys`` as plain tuples (run id text, key, score, value,
        source type, created at), oldest first: what agreement reads, without records."""
        rows = self._select("feedback", "run_id, key, score, value, feedback_source, created_at", None, keys)
        return [  # the value is decoded only where there is no score (it is then the label)
            (
                row[0],
                row[1],
                row[2],
                None if row[2] is not None else loads(row[3]),
                _source_type(row[4]),
                row[5],
            )
            for row in rows
        ]

    def _select(
        self,
        table: str,
        columns: str,
        run_ids: Sequence[uuid.UUID] | None,
        keys: Sequence[str] | None,
        ids: Sequence[uuid.UUID] | None = None,
    ) -> list[sqlite3.Row]:
        clauses, params = [], []
        if ids is not None:
            clauses.append(f"id IN ({', '.join('?' * len(ids))})")
            params += [str(i) for i in ids]
        if run_ids is not None:
            clauses.append(f"run_id IN ({', '.join('?' * len(run_ids))})")
            params += [str(run_id) for run_id in run_ids]
        if keys is not None:
            clauses.append(f"key IN ({', '.join('?' * len(keys))})")
            params += list(keys)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        order = "created_at" if table == "feedback" else "pk"
        return list(self.conn.execute(f"SELECT {columns} FROM {table}{where} ORDER BY {order}", params))

    def find_run(self, run_id: uuid.UUID) -> tuple[uuid.UUID, Run] | None:
        """The experiment and root run holding ``run_id`` (itself, or one of its children)."""
        text = str(run_id)
        row = self.conn.execute("SELECT * FROM runs WHERE id = ?", (text,)).fetchone()
        if row is None:  # a child run lives inside its root's child_runs
            row = self.conn.execute(
                "SELECT * FROM runs WHERE child_runs LIKE ? LIMIT 1", (f"%{text}%",)
            ).fetchone()
        if row is None:
            return None
        return uuid.UUID(row["experiment_id"]), codec.run_from(row)


def _source_type(text: Any) -> Any:
    source = loads(text)
    return source.get("type") if isinstance(source, dict) else None


def _text(value: uuid.UUID | None) -> str | None:
    return None if value is None else str(value)


def _feedback_from(row: sqlite3.Row) -> Feedback:
    return Feedback(
        id=uuid.UUID(row["id"]),
        run_id=codec.uid(row["run_id"]),
        trace_id=codec.uid(row["trace_id"]),
        session_id=codec.uid(row["experiment_id"]),
        key=row["key"],
        score=row["score"],
        value=loads(row["value"]),
        comment=row["comment"],
        correction=loads(row["correction"]),
        feedback_source=loads(row["feedback_source"]),
        extra=loads(row["extra"]),
        created_at=codec.parse_required_ts(row["created_at"]),
    )


def _result_as_feedback(row: sqlite3.Row) -> Feedback:
    score = None if row["error"] else row["score"]
    return Feedback(
        id=uuid.uuid5(_NAMESPACE, f"{row['run_id']}:{row['pk']}"),
        run_id=codec.uid(row["run_id"]),
        session_id=codec.uid(row["experiment_id"]),
        key=row["key"],
        score=score,
        value=loads(row["value"]),
        comment=row["comment"],
        correction=loads(row["correction"]),
        feedback_source={"type": "evaluator"},
        extra={"error": row["error"]} if row["error"] else None,
    )
