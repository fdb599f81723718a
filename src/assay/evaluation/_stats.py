"""Means with honest uncertainty: cluster-robust standard errors and t-based 95% CIs.

With repetitions, rows of one example are not independent, so the standard error is
clustered by example (Liang-Zeger with the G/(G-1) small-sample factor). Without
repetitions it reduces to the usual s / sqrt(n).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist


@dataclass(frozen=True)
class MetricAggregate:
    key: str
    mean: float | None
    n: int
    errors: int
    stderr: float | None
    ci_low: float | None
    ci_high: float | None

    def as_dict(self) -> dict[str, object]:
        return {
            "mean": self.mean, "n": self.n, "errors": self.errors, "stderr": self.stderr,
            "ci95": (self.ci_low, self.ci_high) if self.ci_low is not None else None,
        }


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile (exact for df 1 and 2, a Cornish-Fisher expansion above)."""
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    z = NormalDist().inv_cdf(p)
    v = float(df)
    return (
        z
        + (z**3 + z) / (4 * v)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
        + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * v**4)
    )


def clustered_interval(
    mean: float, n: int, groups: int, residual_square_sum: float | None, unit_range: bool
) -> tuple[float | None, float | None, float | None]:
    """(standard error, low, high) of a mean, from the sum over clusters of the squared
    per-cluster residual sums. A metric whose scores all lie in [0, 1] gets its interval
    clipped to [0, 1]: a pass rate of 0.9 is not plausibly 1.04."""
    if n == 0 or groups < 2 or residual_square_sum is None:
        return None, None, None
    variance = max(residual_square_sum, 0.0) * groups / (groups - 1)
    stderr = math.sqrt(variance) / n
    half = t_quantile(0.975, groups - 1) * stderr
    low, high = mean - half, mean + half
    if unit_range:
        low, high = max(low, 0.0), min(high, 1.0)
    return stderr, low, high


def aggregate(
    key: str, scores: Sequence[float], clusters: Sequence[Hashable], errors: int
) -> MetricAggregate:
    n = len(scores)
    if n == 0:
        return MetricAggregate(key, None, 0, errors, None, None, None)
    mean = math.fsum(scores) / n
    residual_sums: dict[Hashable, float] = {}
    for score, cluster in zip(scores, clusters):
        residual_sums[cluster] = residual_sums.get(cluster, 0.0) + (score - mean)
    squares = math.fsum(r * r for r in residual_sums.values())
    unit_range = min(scores) >= 0.0 and max(scores) <= 1.0
    stderr, low, high = clustered_interval(mean, n, len(residual_sums), squares, unit_range)
    return MetricAggregate(key, mean, n, errors, stderr, low, high)
