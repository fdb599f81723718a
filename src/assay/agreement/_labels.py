"""Reading two raters' labels off a stored experiment, row by row.

A label source is named by a string:

- ``"KEY"`` for the judge: the evaluator result ``KEY`` on each run (its score, else its
  value); an errored result is no label, counted apart.
- ``"KEY"`` for people: the feedback ``KEY`` that ``Client.create_feedback`` (or the UI's
  labelling) stored on each run with source ``human``; the latest one wins.
- ``"outputs.FIELD"`` / ``"reference.FIELD"`` (or ``"outputs"`` / ``"reference"``): a field
  of the run's outputs or of the example's reference outputs. This is how a judge run as
  the *target* of an experiment over a human-labelled dataset is read: its verdict is in
  the outputs, the people's label in the reference.

Rows are identified by (example id, repetition), so two experiments over one dataset pair
up. When both sources are plain keys of one experiment (the common case), labels are read
from the stored scores and the feedback table directly, keyed by run id: no records are
built, so 10,000 labelled rows read in a fraction of a second.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from assay.schemas import Feedback
from assay.store.base import Store
from assay.store.records import ExperimentRecord, ExperimentRow

__all__ = ["HUMAN", "RowLabels", "Source", "read_labels"]

HUMAN = "human"
_FIELD_PREFIXES = ("outputs", "reference")

RowKey = tuple[str, int] | str  # (example id, repetition), or a run id on the fast path


@dataclass(frozen=True)
class Source:
    """Where one rater's labels come from (see the module docstring)."""

    spec: str
    human: bool  # a plain key names human feedback (True) or an evaluator result (False)
    feedback_source: str | None = HUMAN  # for human feedback: the source type; None: any

    @property
    def field_path(self) -> tuple[str, str | None] | None:
        """``("outputs" | "reference", field or None)`` for a field source, else None."""
        head, _, rest = self.spec.partition(".")
        if head in _FIELD_PREFIXES:
            return head, rest or None
        return None

    @property
    def label(self) -> str:
        return self.spec


@dataclass
class RowLabels:
    """One source's labels by row, with the run each row came from and what was missing."""

    labels: dict[RowKey, Any] = field(default_factory=dict)
    runs: dict[RowKey, uuid.UUID | str] = field(default_factory=dict)  # the row's run id
    errors: int = 0  # rows whose judge result errored (no label, not a disagreement)


def read_labels(
    store: Store, record: ExperimentRecord, sources: Iterable[Source], *, by_run: bool = False
) -> list[RowLabels]:
    """Each source's labels over the experiment's stored rows. ``by_run``: rows keyed by run
    id, read without building records, when every source is a plain key (else by example)."""
    wanted = list(sources)
    if by_run and all(source.field_path is None for source in wanted):
        found = _read_scores(store, record, wanted)
        if found is not None:
            return found
    found = [RowLabels() for _ in wanted]
    rows = store.load_rows(record)
    human = {s.spec for s in wanted if s.human and s.field_path is None}
    feedback = _human_feedback(store, rows, human) if human else {}
    for row in rows:
        key = (str(row.example.id), row.repetition)
        for source, into in zip(wanted, found, strict=True):
            into.runs[key] = row.run.id
            _take(source, row, key, into, feedback)
    return found


def _take(
    source: Source,
    row: ExperimentRow,
    key: RowKey,
    into: RowLabels,
    feedback: dict[tuple[str, uuid.UUID], list[Feedback]],
) -> None:
    path = source.field_path
    if path is not None:
        value = _field(row, *path)
        if value is not None:
            into.labels[key] = value
        return
    if source.human:
        chosen = [f for f in feedback.get((source.spec, row.run.id), []) if _from(f, source.feedback_source)]
        if chosen:
            latest = max(chosen, key=lambda f: f.created_at)
            label = latest.score if latest.score is not None else latest.value
            if label is not None:
                into.labels[key] = label
        return
    for result in row.results:
        if result.key != source.spec:
            continue
        if result.error:
            into.errors += 1
        elif result.score is not None or result.value is not None:
            into.labels[key] = result.score if result.score is not None else result.value
        return


def _read_scores(store: Store, record: ExperimentRecord, wanted: list[Source]) -> list[RowLabels] | None:
    """Labels from ``iter_scores`` and ``feedback_labels``; None when a judge result holds
    a value but no score (text labels: read the records instead)."""
    found = [RowLabels() for _ in wanted]
    judges = {s.spec: found[i] for i, s in enumerate(wanted) if not s.human}
    runs: dict[RowKey, uuid.UUID | str] = {}
    for *_, run_id, key, score, errored, _usage, _info in store.iter_scores(record.id):
        run = str(run_id)
        runs[run] = run
        into = judges.get(key)
        if into is None:
            continue
        if errored:
            into.errors += 1
        elif score is None:
            return None
        else:
            into.labels[run] = score
    humans = [(s, found[i]) for i, s in enumerate(wanted) if s.human]
    if humans:
        feedback = store.feedback_labels(sorted({s.spec for s, _ in humans}))
        for source, into in humans:
            for run_id, key, score, value, kind, _created in feedback:  # oldest first: the latest wins
                run = str(run_id)
                if key != source.spec or run not in runs or kind == "evaluator":
                    continue
                if source.feedback_source is not None and kind != source.feedback_source:
                    continue
                label = score if score is not None else value
                if label is not None:
                    into.labels[run] = label
    for into in found:
        into.runs = dict(runs)  # text ids: parsing 10,000 UUIDs would cost more than the rest
    return found


def _field(row: ExperimentRow, where: str, name: str | None) -> Any:
    holder = row.run.outputs if where == "outputs" else row.example.outputs
    if holder is None:
        return None
    if name is None:
        return holder if not isinstance(holder, dict) or len(holder) != 1 else next(iter(holder.values()))
    return holder.get(name) if isinstance(holder, dict) else None


def _human_feedback(
    store: Store, rows: list[ExperimentRow], keys: set[str]
) -> dict[tuple[str, uuid.UUID], list[Feedback]]:
    run_ids = {row.run.id for row in rows}
    by_run: dict[tuple[str, uuid.UUID], list[Feedback]] = {}
    for item in store.list_feedback(None, sorted(keys)):
        source = (item.feedback_source or {}).get("type")
        if source == "evaluator" or item.run_id not in run_ids:
            continue  # evaluator results come back as feedback too: people's labels only
        by_run.setdefault((item.key, item.run_id), []).append(item)
    return by_run


def _from(item: Feedback, wanted: str | None) -> bool:
    return wanted is None or (item.feedback_source or {}).get("type") == wanted
