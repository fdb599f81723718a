"""Metric metadata: which way is better and what range scores lie in.

Standalone, so the schemas can use it; ``assay.evaluation.metric`` declares it on
evaluators. Stored in a result's ``evaluator_info`` as ``direction`` and ``score_range``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

Direction = Literal["higher", "lower"]
Range = tuple[float | None, float | None]
DIRECTIONS: tuple[Direction, ...] = ("higher", "lower")
UNIT_RANGE: Range = (0.0, 1.0)
NON_NEGATIVE: Range = (0.0, None)


@dataclass(frozen=True)
class MetricInfo:
    """How to read a metric's scores. Undeclared metrics are higher-is-better, range unknown."""

    direction: Direction = "higher"
    score_range: Range | None = None
    declared: bool = False

    @classmethod
    def of(cls, evaluator_info: Mapping[str, Any] | None) -> MetricInfo:
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

    def worst(self) -> float | None:
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
