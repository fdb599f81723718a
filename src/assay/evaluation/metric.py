"""Metric metadata: which way is better, what range scores lie in, and whether the
evaluator needs the target's outputs.

Declared once per evaluator: on a function with :func:`metric`, on a ``BaseEvaluator``
subclass with the class attributes ``direction``, ``score_range`` and ``needs_outputs``.
Each result the evaluator returns then carries ``direction`` and ``score_range`` in its
``evaluator_info`` (LangSmith's field for facts about the evaluator), which the store
keeps, so the report, the UI and ``assay.compare`` read them back from stored results.
A result can also declare its own: ``EvaluationResult(key=..., score=..., direction="lower")``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Literal, Optional, TypeVar, cast

Direction = Literal["higher", "lower"]
Range = tuple[Optional[float], Optional[float]]
DIRECTIONS: tuple[Direction, ...] = ("higher", "lower")
UNIT_RANGE: Range = (0.0, 1.0)
NON_NEGATIVE: Range = (0.0, None)

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class MetricInfo:
    """How to read a metric's scores. Undeclared metrics are higher-is-better, range unknown."""

    direction: Direction = "higher"
    score_range: Optional[Range] = None
    declared: bool = False

    @classmethod
    def of(cls, evaluator_info: Optional[Mapping[str, Any]]) -> MetricInfo:
        """Read from a stored result's ``evaluator_info``; bad values fall back to the default."""
        info = evaluator_info or {}
        direction = info.get("direction")
        bounds = info.get("score_range")
        try:
            score_range = check_range(bounds) if bounds is not None else None
        except ValueError:
            score_range = None
        if direction in DIRECTIONS:
            return cls(cast(Direction, direction), score_range, True)
        return cls("higher", score_range, score_range is not None)

    def as_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"direction": self.direction}
        if self.score_range is not None:
            info["score_range"] = list(self.score_range)
        return info

    def is_improvement(self, difference: float) -> bool:
        """Whether B - A = ``difference`` (nonzero) is a change for the better."""
        return difference > 0 if self.direction == "higher" else difference < 0

    def worst(self) -> Optional[float]:
        """The worst possible score, when the range bounds it."""
        if self.score_range is None:
            return None
        return self.score_range[0] if self.direction == "higher" else self.score_range[1]


def check_direction(direction: Any) -> Direction:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'higher' or 'lower' (which is better), got {direction!r}")
    return cast(Direction, direction)


def check_range(bounds: Any) -> Range:
    """A (low, high) pair of numbers or None (unbounded on that side), low <= high."""
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise ValueError(f"score_range must be a (low, high) pair, got {bounds!r}")
    low, high = (None if b is None else _finite_number(b) for b in bounds)
    if low is not None and high is not None and low > high:
        raise ValueError(f"score_range must have low <= high, got {bounds!r}")
    return (low, high)


def _finite_number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"a score_range bound must be a finite number or None, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Declaration:
    """What an evaluator declared about itself (None: not declared)."""

    info: Optional[MetricInfo] = None
    needs_outputs: Optional[bool] = None


def metric(
    *,
    direction: Optional[Direction] = None,
    score_range: Optional[Range] = None,
    needs_outputs: Optional[bool] = None,
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
