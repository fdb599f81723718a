"""Annotation queues: which rows a person labels, in which order.

A queue is its definition (experiments, a rule, N, a seed), carried in its address, so
the same definition always gives the same rows in the same order. Progress is read
from the store: a row is done for an annotator once they labelled or skipped it, so
position and progress survive a restart of the server (or of the annotator).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Literal, get_args

from assay.ui.db import ReadOnlyDatabase
from assay.ui.errors import BadRequest
from assay.ui.queries._sql import in_list

__all__ = ["QueueRule", "QueueSpec", "RULES", "queue_runs"]

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


def queue_runs(db: ReadOnlyDatabase, spec: QueueSpec) -> list[str]:
    """The queue's run ids, in the order they are labelled."""
    marks, params = in_list(list(spec.experiment_ids))
    order = _experiment_order(spec.experiment_ids)
    if spec.rule == "unsure":
        ids = _unsure(db, marks, params, order)
    else:
        where = {"all": "1 = 1", "random": "1 = 1", "failed": _FAILED, "disagree": _DISAGREE}[spec.rule]
        rows = db.query(
            f"SELECT u.id FROM runs u WHERE u.experiment_id IN {marks} AND {where} "
            f"ORDER BY {order}, u.position, u.repetition",
            params,
        )
        ids = [row["id"] for row in rows]
    if spec.rule == "random":
        assert spec.n is not None
        return random.Random(spec.seed).sample(ids, min(spec.n, len(ids)))
    return ids[: spec.n] if spec.n is not None else ids


_FAILED = (
    "(u.error IS NOT NULL OR EXISTS (SELECT 1 FROM results r WHERE r.run_id = u.id "
    "AND (r.error IS NOT NULL OR r.score < 1)))"
)
_DISAGREE = (
    "EXISTS (SELECT 1 FROM results r WHERE r.run_id = u.id AND r.error IS NULL "
    "AND r.score >= 0.5 AND r.score <= 1) AND EXISTS (SELECT 1 FROM results r WHERE "
    "r.run_id = u.id AND r.error IS NULL AND r.score >= 0 AND r.score < 0.5)"
)


def _unsure(db: ReadOnlyDatabase, marks: str, params: tuple[Any, ...], order: str) -> list[str]:
    rows = db.query(
        "SELECT u.id FROM runs u JOIN results r ON r.run_id = u.id "
        f"WHERE u.experiment_id IN {marks} AND r.error IS NULL AND r.score >= 0 AND r.score <= 1 "
        f"GROUP BY u.id, u.experiment_id, u.position, u.repetition "
        f"ORDER BY MIN(ABS(r.score - 0.5)), {order}, u.position, u.repetition",
        params,
    )
    return [row["id"] for row in rows]


def _experiment_order(ids: tuple[str, ...]) -> str:
    """The experiments in the order the queue names them (ids are checked UUID text)."""
    cases = " ".join(f"WHEN '{_checked(i)}' THEN {n}" for n, i in enumerate(ids))
    return f"CASE u.experiment_id {cases} END" if len(ids) > 1 else "u.experiment_id"


def _checked(experiment_id: str) -> str:
    if not all(ch in "0123456789abcdef-" for ch in experiment_id):
        raise BadRequest(f"not an experiment id: {experiment_id!r}")
    return experiment_id
