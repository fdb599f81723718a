"""Records the store keeps besides the public schemas."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from assay.schemas import EvaluationResult, Example, Run, utcnow

__all__ = ["ComparisonRecord", "ExperimentRecord", "ExperimentRow"]


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
    status: str = "running"  # running | completed | failed | interrupted
    num_examples: int = 0
    num_repetitions: int = 1
    created_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None


@dataclass
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
