"""Reading people's feedback back: the latest label of each annotator on each row and key.

Human feedback is a ``feedback`` record whose source type is ``human`` and whose source
metadata names the annotator. A person may change their mind: each save adds a record,
and the latest one per (row, key, annotator) counts. Two annotators never overwrite
each other: their records are apart by name.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.ui.db import ReadOnlyDatabase
from assay.ui.queries._sql import in_list, loads

__all__ = ["HUMAN", "SKIP_KEY", "Label", "annotator_of", "latest_labels"]

HUMAN = "human"
SKIP_KEY = "skipped"
"""The key of the record a queue writes when a person skips a row (never a metric)."""
NOTE_KEY = "note"
"""The key of the record that holds a comment and a corrected output (never a metric)."""


@dataclass(frozen=True)
class Label:
    run_id: str
    key: str
    annotator: str
    score: float | int | None
    value: Any
    comment: str | None
    correction: Any
    created_at: str


def annotator_of(source: Any) -> str | None:
    """The annotator named by a human feedback source, None for any other source."""
    if not isinstance(source, dict) or source.get("type") != HUMAN:
        return None
    metadata = source.get("metadata")
    name = metadata.get("annotator") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) and name else "anonymous"


def latest_labels(
    db: ReadOnlyDatabase, experiment_ids: Sequence[str], run_ids: Sequence[str] | None = None
) -> list[Label]:
    """The latest human record per (run, key, annotator) of these experiments (these runs only)."""
    if not experiment_ids or (run_ids is not None and not run_ids) or not _has_table(db):
        return []
    marks, params = in_list(list(experiment_ids))
    where = f"experiment_id IN {marks}"
    if run_ids is not None:
        run_marks, run_params = in_list(list(run_ids))
        where, params = f"run_id IN {run_marks} AND {where}", (*run_params, *params)
    latest: dict[tuple[str, str, str], Label] = {}
    rows = db.query(
        "SELECT run_id, key, score, value, comment, correction, feedback_source, created_at "
        f"FROM feedback WHERE {where} ORDER BY created_at, id",
        params,
    )
    for row in rows:
        annotator = annotator_of(loads(row["feedback_source"]))
        if annotator is None or row["run_id"] is None:
            continue
        label = Label(
            run_id=row["run_id"],
            key=row["key"],
            annotator=annotator,
            score=_score(row["score"]),
            value=loads(row["value"]),
            comment=row["comment"],
            correction=loads(row["correction"]),
            created_at=row["created_at"],
        )
        latest[(label.run_id, label.key, annotator)] = label
    return list(latest.values())


def by_run(labels: Sequence[Label]) -> dict[str, list[Label]]:
    grouped: dict[str, list[Label]] = defaultdict(list)
    for label in labels:
        grouped[label.run_id].append(label)
    return grouped


def _score(stored: Any) -> float | int | None:
    """A stored score: a number in SQLite, JSON text in PostgreSQL."""
    if isinstance(stored, str):
        stored = loads(stored)
    if isinstance(stored, bool):
        return int(stored)
    return stored if isinstance(stored, (int, float)) else None


def _has_table(db: ReadOnlyDatabase) -> bool:
    """A store made before feedback existed has no feedback table."""
    found = db.query_one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'feedback'")
    return found is not None
