"""95% intervals that fit the metric: Wilson for 0/1 scores, Student's t otherwise.

Every interval is clipped to the metric's range (a pass rate of 0.9 is not plausibly
1.04) and carries the name of its method, which the report prints next to it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from assay.stats._distributions import normal_quantile, t_quantile

__all__ = ["CONFIDENCE", "Interval", "Range", "is_binary", "student_t", "wilson"]

Range = tuple[float | None, float | None]
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    method: str

    def clipped(self, bounds: Range) -> Interval:
        low, high = self.low, self.high
        if bounds[0] is not None:
            low, high = max(low, bounds[0]), max(high, bounds[0])
        if bounds[1] is not None:
            low, high = min(low, bounds[1]), min(high, bounds[1])
        return Interval(low, high, self.method)


def wilson(successes: float, n: int, confidence: float = CONFIDENCE) -> Interval:
    """Wilson score interval for a proportion; sensible at 0/n and n/n, unlike Wald's."""
    if n <= 0:
        raise ValueError("a Wilson interval needs n >= 1")
    z = normal_quantile(0.5 + confidence / 2)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # Exact at the edges: 0/n has low 0, n/n has high 1 (no 1 - 1e-17 from rounding).
    low = 0.0 if successes <= 0 else centre - half
    high = 1.0 if successes >= n else centre + half
    return Interval(low, high, "Wilson")


def student_t(
    mean: float, stderr: float, df: int, method: str = "Student t", confidence: float = CONFIDENCE
) -> Interval:
    """mean +- t(df) * stderr."""
    half = t_quantile(0.5 + confidence / 2, df) * stderr if stderr > 0 else 0.0
    return Interval(mean - half, mean + half, method)


def is_binary(minimum: float, maximum: float, all_zero_or_one: bool) -> bool:
    """A metric whose every score is 0 or 1 (pass/fail, exact match)."""
    return all_zero_or_one and minimum >= 0.0 and maximum <= 1.0
