"""EvaluationResult: what one evaluator says about one run (or one experiment)."""

from __future__ import annotations

import math
import uuid
from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator


class EvaluationResult(BaseModel):
    """A single metric. ``error`` is set (and ``score`` is None) when the evaluator failed.

    An errored result is data, never a zero: aggregates count it apart.
    """

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    key: str
    score: Union[float, int, bool, None] = None
    value: Any = None
    feedback: Optional[str] = None
    comment: Optional[str] = None
    correction: Optional[dict[str, Any]] = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    evaluator_info: dict[str, Any] = Field(default_factory=dict)
    source_run_id: Optional[uuid.UUID] = None
    target_run_id: Optional[uuid.UUID] = None
    error: Optional[str] = None

    @field_validator("score")
    @classmethod
    def _finite(cls, score: Any) -> Any:
        if isinstance(score, float) and not math.isfinite(score):
            raise ValueError(f"score must be a finite number, got {score!r}")
        return score

    @field_validator("metadata", "evaluator_info", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value

    @property
    def numeric_score(self) -> Optional[float]:
        """The score as a float, or None when absent or errored."""
        if self.error is not None or self.score is None:
            return None
        return float(self.score)


class EvaluationResults(BaseModel):
    """Several metrics from one evaluator call."""

    results: list[EvaluationResult] = Field(default_factory=list)
