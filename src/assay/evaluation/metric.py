"""Declaring metric metadata on evaluators: which way is better, what range scores lie
in, and whether the evaluator needs the target's outputs.

Declared once per evaluator: on a function with :func:`metric`, on a ``BaseEvaluator``
subclass with the class attributes ``direction``, ``score_range`` and ``needs_outputs``.
Each result the evaluator returns then carries ``direction`` and ``score_range`` in its
``evaluator_info`` (LangSmith's field for facts about the evaluator), which the store
keeps, so the report, the UI and ``assay.compare`` read them back from stored results.
A result can also declare its own: ``EvaluationResult(key=..., score=..., direction="lower")``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from assay._metric import (
    DIRECTIONS,
    NON_NEGATIVE,
    UNIT_RANGE,
    Direction,
    MetricInfo,
    Range,
    check_direction,
    check_range,
)

__all__ = [
    "DIRECTIONS",
    "NON_NEGATIVE",
    "UNIT_RANGE",
    "Declaration",
    "Direction",
    "MetricInfo",
    "Range",
    "check_direction",
    "check_range",
    "declaration_of",
    "metric",
]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Declaration:
    """What an evaluator declared about itself (None: not declared)."""

    info: MetricInfo | None = None
    needs_outputs: bool | None = None


def metric(
    *,
    direction: Direction | None = None,
    score_range: Range | None = None,
    needs_outputs: bool | None = None,
) -> Callable[[F], F]:
    """Declare an evaluator function's metric metadata::

        @assay.metric(direction="lower", score_range=(0, None))
        def latency_penalty(run): ...

        @assay.metric(needs_outputs=False)   # also called when the target failed
        def target_failed(run):
            return run.error is not None

    By default a function that takes ``run`` or ``outputs`` (or ``**kwargs``, or the legacy
    ``(run, example)``) is not called on a row whose target failed: its result is recorded
    as *skipped*, so a failed target never scores 1.0 or 0.0 by accident.
    """
    info = None
    if direction is not None or score_range is not None:
        info = MetricInfo(
            check_direction(direction or "higher"),
            check_range(score_range) if score_range is not None else None,
            True,
        )
    declaration = Declaration(info, needs_outputs)

    def mark(func: F) -> F:
        func.__assay_metric__ = declaration  # type: ignore[attr-defined]
        return func

    return mark


def declaration_of(evaluator: Any) -> Declaration:
    """The declaration on a function (from :func:`metric`) or on an evaluator's class."""
    declared = getattr(evaluator, "__assay_metric__", None)
    if isinstance(declared, Declaration):
        return declared
    direction = getattr(evaluator, "direction", None)
    bounds = getattr(evaluator, "score_range", None)
    needs = getattr(evaluator, "needs_outputs", None)
    info = None
    if direction is not None or bounds is not None:
        info = MetricInfo(
            check_direction(direction or "higher"),
            check_range(bounds) if bounds is not None else None,
            True,
        )
    return Declaration(info, needs if isinstance(needs, bool) else None)
