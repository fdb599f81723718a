"""Human feedback records: source type ``human``, the annotator named in its metadata.

A person may change their mind: each save adds a record, and the latest one per
(row, key, annotator) counts. Two annotators never overwrite each other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["HUMAN", "NOTE_KEY", "SKIP_KEY", "Label", "annotator_of", "keep_latest"]

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


def keep_latest(labels: Iterable[Label]) -> list[Label]:
    """The latest label per (run, key, annotator), from labels in the order they were made."""
    latest: dict[tuple[str, str, str], Label] = {}
    for label in labels:
        latest[(label.run_id, label.key, label.annotator)] = label
    return list(latest.values())
