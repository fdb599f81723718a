"""Annotation queues: which rows a person labels, in which order.

A queue is its definition (experiments, a rule, N, a seed), carried in its address, so
the same definition always gives the same rows in the same order. Progress is read
from the store: a row is done for an annotator once they labelled or skipped it, so
position and progress survive a restart of the server (or of the annotator).
"""

from __future__ import annotations

import random
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Literal, get_args

from assay.store.read import annotation
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.kept import signature
from assay.ui.errors import BadRequest

__all__ = ["QueueRule", "QueueSpec", "RULES", "kept_queue_runs", "queue_runs"]

QueueRule = Literal["all", "random", "failed", "disagree", "unsure"]
RULES: dict[str, str] = {
    "all": "every row",
    "random": "a seeded random sample of N rows",
    "failed": "rows whose target or an evaluator failed, or that scored below 1",
    "disagree": "rows where two evaluators disagree (one passes at 0.5, another does not)",
    "unsure": "rows whose judge was least confident (a [0, 1] score nearest 0.5) first",
}
MAX_QUEUE = 100_000


@dataclass(frozen=True)
class QueueSpec:
    experiment_ids: tuple[str, ...]
    rule: str = "all"
    n: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.rule not in get_args(QueueRule):
            raise BadRequest(f"unknown queue rule {self.rule!r}; accepted: {', '.join(RULES)}")
        if self.n is not None and not 1 <= self.n <= MAX_QUEUE:
            raise BadRequest(f"parameter 'n' must be between 1 and {MAX_QUEUE}; got {self.n}")
        if self.rule == "random" and self.n is None:
            raise BadRequest("the 'random' rule needs 'n', the sample's size")


_KEPT = 32
_lock = threading.Lock()
_kept: weakref.WeakKeyDictionary[ReadOnlyDatabase, dict[QueueSpec, tuple[Any, list[str]]]] = (
    weakref.WeakKeyDictionary()
)


def kept_queue_runs(db: ReadOnlyDatabase, spec: QueueSpec) -> list[str]:
    """``queue_runs``, read once while its finished experiments stand still: every
    keystroke in a queue shows its next row without reading all its rows again."""
    signatures = tuple(_standing(db, experiment_id, spec.rule) for experiment_id in spec.experiment_ids)
    with _lock:
        cached = _kept.setdefault(db, {}).get(spec)
    if cached is not None and cached[0] == signatures and None not in signatures:
        return cached[1]
    runs = queue_runs(db, spec)
    if None not in signatures:  # a running experiment's queue is read afresh
        with _lock:
            known = _kept.setdefault(db, {})
            if len(known) >= _KEPT:
                known.pop(next(iter(known)))
            known[spec] = (signatures, runs)
    return runs


def _standing(db: ReadOnlyDatabase, experiment_id: str, rule: str) -> Any:
    """What changes when the queue's rows may have; None while they may still change.
    Every row, or a sample of them, changes only with the rows themselves; the other
    rules read scores, which a re-score rewrites (the stored figures say when)."""
    if rule not in ("all", "random"):
        return signature(db, experiment_id)
    return annotation.queue_standing(db, experiment_id)


def queue_runs(db: ReadOnlyDatabase, spec: QueueSpec) -> list[str]:
    """The queue's run ids, in the order they are labelled."""
    for experiment_id in spec.experiment_ids:
        _checked(experiment_id)
    ids = annotation.queue_run_ids(db, spec.experiment_ids, spec.rule)
    if spec.rule == "random":
        assert spec.n is not None
        return random.Random(spec.seed).sample(ids, min(spec.n, len(ids)))
    return ids[: spec.n] if spec.n is not None else ids


def _checked(experiment_id: str) -> str:
    if not all(ch in "0123456789abcdef-" for ch in experiment_id):
        raise BadRequest(f"not an experiment id: {experiment_id!r}")
    return experiment_id
