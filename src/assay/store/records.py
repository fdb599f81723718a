"""Records the store keeps besides the public schemas."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from assay.schemas import EvaluationResult, Example, Run, utcnow

__all__ = ["ComparisonRecord", "ExperimentRecord", "ExperimentRow", "Lease", "LeaseClaim"]


class ExperimentRecord(BaseModel):
    """An experiment as stored: what ran, on which dataset version, and how it ended."""

    id: uuid.UUID = Field(default_factory=uuid.uuid4)
    name: str
    dataset_id: uuid.UUID | None = None
    dataset_version: int | None = None
    description: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    config: dict[str, Any] = Field(default_factory=dict)
    fingerprint: str | None = None
    status: str = "running"  # running | partial (some shards done) | completed | failed | interrupted
    num_examples: int = 0
    num_repetitions: int = 1
    created_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None


@dataclass(slots=True)  # made per row: no per-instance dict, cheaper to make
class ExperimentRow:
    """One (example, repetition) of an experiment: its run and its evaluation results."""

    run: Run
    example: Example
    repetition: int
    position: int
    results: list[EvaluationResult] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, int]:
        return (str(self.example.id), self.repetition)


@dataclass(frozen=True)
class LeaseClaim:
    """A lease as a new holder asks for it: shard ``shard`` of ``shards``, held by
    ``pid`` on ``host`` under ``token`` for ``ttl`` seconds (renewed while it runs)."""

    shard: int
    shards: int
    host: str
    pid: int
    token: str
    ttl: float


@dataclass(frozen=True)
class Lease:
    """Who runs one shard of an experiment, until when, and how the shard's last run ended.

    ``expires_at`` is in seconds since the epoch; a holder renews it while it runs and
    sets it to 0 when it stops, so a lease past its expiry was left by a dead process.
    ``state``: running, done, failed or interrupted."""

    experiment_id: uuid.UUID
    shard: int
    shards: int
    host: str
    pid: int
    token: str
    expires_at: float
    state: str

    @property
    def holder(self) -> str:
        return f"pid {self.pid} on {self.host}"

    def live(self, now: float) -> bool:
        return self.expires_at > now


@dataclass
class ComparisonRecord:
    """A judgement comparing the outputs of several experiments on one example."""

    name: str
    experiment_ids: list[uuid.UUID]
    example_id: uuid.UUID
    key: str
    scores: dict[str, float]
    comment: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    id: uuid.UUID = field(default_factory=uuid.uuid4)


@dataclass
class MetricStats:
    """One metric of an experiment, as the report and the UI show it: stored, never rescanned."""

    key: str
    mean: float | None
    n: int
    errors: int
    unscored: int
    stderr: float | None
    ci_low: float | None
    ci_high: float | None
    min: float | None
    max: float | None
    histogram: list[int] = field(default_factory=list)
    """Counts in equal-width bins over [0, 1] (a unit-range metric) or [min, max]."""
    skipped: int = 0  # not called: the target failed and the evaluator needs outputs
    ci_method: str | None = None
    direction: str = "higher"
    score_range: tuple[float | None, float | None] | None = None
    binary: bool = False  # every score is 0 or 1

    @property
    def unit_range(self) -> bool:
        return self.min is not None and self.max is not None and self.min >= 0 and self.max <= 1


@dataclass
class ExperimentStats:
    """Counts and per-metric figures of an experiment, kept current while it runs.

    ``rows``, ``run_errors`` and the latency figures are exact for the rows committed with
    them; ``metrics`` are refreshed every few seconds while running, and exact once
    ``final`` (the experiment ended)."""

    rows: int = 0
    run_errors: int = 0
    latency_n: int = 0
    latency_sum: float = 0.0
    latency_max: float | None = None
    usage: dict[str, float] = field(default_factory=dict)
    metrics: list[MetricStats] | None = None
    final: bool = False

    @property
    def latency_mean(self) -> float | None:
        return self.latency_sum / self.latency_n if self.latency_n else None
