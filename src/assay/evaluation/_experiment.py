"""Creating an experiment, or reopening one to resume it, without ever mixing two runs."""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any

from assay.errors import AssayError
from assay.evaluation._data import ResolvedData
from assay.store.base import Store
from assay.store.records import ExperimentRecord


class ExperimentError(AssayError, ValueError):
    """An experiment name that clashes, or a resume that would not match the original."""


@dataclass(frozen=True)
class ExperimentPlan:
    """What an experiment is: the parts that must match for a resume to be honest."""

    target: str
    evaluators: tuple[str, ...]
    summary_evaluators: tuple[str, ...]
    num_repetitions: int

    def config(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "evaluators": list(self.evaluators),
            "summary_evaluators": list(self.summary_evaluators),
            "num_repetitions": self.num_repetitions,
        }

    def fingerprint(self, data: ResolvedData) -> str:
        payload = {**self.config(), "dataset_id": str(data.dataset.id), "dataset_version": data.version}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def experiment_name(experiment: str | None, prefix: str | None) -> str:
    name = experiment or f"{prefix or 'experiment'}-{uuid.uuid4().hex[:8]}"
    if "/" in name or any(ord(char) < 32 for char in name):
        raise ExperimentError(
            f"experiment name {name!r} may not hold '/' or control characters (it is part of "
            "the UI's addresses)"
        )
    return name


def open_experiment(
    store: Store,
    name: str,
    data: ResolvedData,
    plan: ExperimentPlan,
    *,
    resume: bool,
    description: str | None,
    metadata: dict[str, Any] | None,
) -> ExperimentRecord:
    existing = store.get_experiment(name=name)
    if existing is not None:
        if not resume:
            raise ExperimentError(
                f"an experiment named {name!r} already exists in {store.url}; pass resume=True "
                "to continue it, or choose another name (or use experiment_prefix=...)"
            )
        _check_resumable(existing, data, plan)
        store.reopen_experiment(existing.id)
        return existing
    record = ExperimentRecord(
        name=name,
        dataset_id=data.dataset.id,
        dataset_version=data.version,
        description=description,
        metadata=dict(metadata or {}),
        config=plan.config(),
        fingerprint=plan.fingerprint(data),
        num_examples=data.count,
        num_repetitions=plan.num_repetitions,
    )
    store.create_experiment(record)
    return record


def _check_resumable(existing: ExperimentRecord, data: ResolvedData, plan: ExperimentPlan) -> None:
    problems = []
    if existing.dataset_id != data.dataset.id or existing.dataset_version != data.version:
        problems.append(
            f"it ran on dataset {existing.dataset_id} version {existing.dataset_version}, "
            f"not {data.dataset.id} version {data.version}"
        )
    stored = existing.config
    for field, now in plan.config().items():
        if field != "target" and field in stored and stored[field] != now:
            problems.append(f"its {field} was {stored[field]!r}, now {now!r}")
    if problems:
        raise ExperimentError(
            f"cannot resume experiment {existing.name!r}: "
            + "; ".join(problems)
            + ". Resume with the same data and evaluators, or start a new experiment."
        )
