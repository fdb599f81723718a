"""People's latest labels on an experiment's rows, read through the store's API."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from assay.human.labels import Label, annotator_of, keep_latest
from assay.store.base import Store

__all__ = ["human_labels"]

_CHUNK = 500  # run ids per look-up: well under any database's parameter limit


def human_labels(store: Store, run_ids: Sequence[uuid.UUID]) -> list[Label]:
    """The latest human label per (run, key, annotator) on these runs."""
    found: list[Label] = []
    for start in range(0, len(run_ids), _CHUNK):
        for feedback in store.list_feedback(run_ids=list(run_ids[start : start + _CHUNK])):
            annotator = annotator_of(feedback.feedback_source)
            if annotator is None or feedback.run_id is None:
                continue
            score = int(feedback.score) if isinstance(feedback.score, bool) else feedback.score
            found.append(
                Label(
                    run_id=str(feedback.run_id),
                    key=feedback.key,
                    annotator=annotator,
                    score=score,
                    value=feedback.value,
                    comment=feedback.comment,
                    correction=feedback.correction,
                    created_at=feedback.created_at.isoformat(),
                )
            )
    found.sort(key=lambda label: label.created_at)  # stable: records of one instant keep their order
    return keep_latest(found)
