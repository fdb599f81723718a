"""Reading people's feedback back in SQL, for a page: the latest label of each annotator
on each row and key (``assay.human`` says what a human record is)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from assay.human.labels import HUMAN, NOTE_KEY, SKIP_KEY, Label, annotator_of, keep_latest
from assay.store.read import annotation
from assay.store.read.database import ReadOnlyDatabase
from assay.ui.queries._sql import loads

__all__ = ["HUMAN", "NOTE_KEY", "SKIP_KEY", "Label", "annotator_of", "by_run", "latest_labels"]


def latest_labels(
    db: ReadOnlyDatabase, experiment_ids: Sequence[str], run_ids: Sequence[str] | None = None
) -> list[Label]:
    """The latest human record per (run, key, annotator) of these experiments (these runs only)."""
    found: list[Label] = []
    for row in annotation.feedback_records(db, experiment_ids, run_ids):
        annotator = annotator_of(loads(row.feedback_source))
        if annotator is None or row.run_id is None:
            continue
        label = Label(
            run_id=row.run_id,
            key=row.key,
            annotator=annotator,
            score=_score(row.score),
            value=loads(row.value),
            comment=row.comment,
            correction=loads(row.correction),
            created_at=row.created_at,
        )
        found.append(label)
    return keep_latest(found)


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
