"""Confidence intervals from SQL aggregates, computed as the experiment report does.

The store gives, per metric, the mean, n and the sums of residuals per example (the
clusters): the same cluster-robust standard error and t-based 95% CI as
``assay.evaluation._stats.aggregate``, without loading scores into Python.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from assay.evaluation._stats import t_quantile


@dataclass(frozen=True)
class Interval:
    stderr: Optional[float]
    low: Optional[float]
    high: Optional[float]


def clustered_interval(
    mean: Optional[float], n: int, groups: int, residual_square_sum: Optional[float]
) -> Interval:
    """95% CI of a mean from per-cluster residual sums (Liang-Zeger, G/(G-1) factor)."""
    if mean is None or n == 0 or groups < 2 or residual_square_sum is None:
        return Interval(None, None, None)
    variance = residual_square_sum * groups / (groups - 1)
    stderr = math.sqrt(max(variance, 0.0)) / n
    half = t_quantile(0.975, groups - 1) * stderr
    return Interval(stderr, mean - half, mean + half)
