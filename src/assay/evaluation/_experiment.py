"""Creating an experiment, or reopening one to resume it, without ever mixing two runs."""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any

from assay.errors import AlreadyExistsError, ExperimentError, ShardError
from assay.evaluation._data import ResolvedData
from assay.store.base import Store
from assay.store.records import ExperimentRecord, LeaseClaim


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
    shards: int = 1,
    lease: LeaseClaim | None = None,
) -> tuple[ExperimentRecord, bool]:
    """The experiment to run, and whether this call created it (then holding ``lease``,
    taken in the same transaction). A sharded run (``shards`` above 1) joins the experiment
    of that name when it exists: the first shard creates it, and a shard racing it to the
    name joins what the winner created."""
    existing = store.get_experiment(name=name)
    if existing is None:
        record = _new_record(name, data, plan, description, metadata, shards)
        try:
            store.create_experiment(record, lease)
            return record, True
        except AlreadyExistsError:
            existing = store.get_experiment(name=name)  # another process created it first
            if existing is None:
                raise
    if not resume and shards == 1:
        raise ExperimentError(
            f"an experiment named {name!r} already exists in {store.url}; pass resume=True "
            "to continue it, or choose another name (or use experiment_prefix=...)"
        )
    _check_resumable(existing, data, plan)
    _check_shards(existing, shards)
    return existing, False


def _new_record(
    name: str,
    data: ResolvedData,
    plan: ExperimentPlan,
    description: str | None,
    metadata: dict[str, Any] | None,
    shards: int,
) -> ExperimentRecord:
    config = plan.config()
    if shards > 1:  # not in the fingerprint: a split does not change what is measured
        config["shards"] = shards
    return ExperimentRecord(
        name=name,
        dataset_id=data.dataset.id,
        dataset_version=data.version,
        description=description,
        metadata=dict(metadata or {}),
        config=config,
        fingerprint=plan.fingerprint(data),
        num_examples=data.count,
        num_repetitions=plan.num_repetitions,
    )


def stored_shards(experiment: ExperimentRecord) -> int:
    """How many shards the experiment is split into (1: it runs whole)."""
    return int(experiment.config.get("shards", 1))


def _check_shards(existing: ExperimentRecord, shards: int) -> None:
    stored = stored_shards(existing)
    if stored == shards:
        return
    if stored == 1:
        raise ShardError(
            f"experiment {existing.name!r} runs whole (it was created without --shard / shard=), "
            f"so it cannot be split into {shards} shards now; resume it without --shard, or "
            "choose another experiment name"
        )
    given = "a run without --shard (shard=)" if shards == 1 else f"--shard I/{shards} (shard=(i, {shards}))"
    raise ShardError(
        f"experiment {existing.name!r} is split into {stored} shards, so {given} does not fit "
        f"it: pass --shard I/{stored} with I from 1 to {stored} (shard=(i, {stored}) with i from 0)"
    )


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
