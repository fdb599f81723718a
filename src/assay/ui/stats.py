"""Confidence intervals from SQL aggregates, computed as the experiment report does.

The store gives, per metric, the mean, n and the sums of residuals per example (the
clusters); ``assay.evaluation._stats.clustered_interval`` turns them into the same
cluster-robust standard error and t-based 95% CI as ``ExperimentResults.aggregate``,
without loading scores into Python.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.evaluation._stats import clustered_interval as _interval

__all__ = ["Interval", "clustered_interval"]


@dataclass(frozen=True)
class Interval:
    stderr: float | None
    low: float | None
    high: float | None


def clustered_interval(
    mean: float | None,
    n: int,
    groups: int,
    residual_square_sum: float | None,
    unit_range: bool = False,
) -> Interval:
    """95% CI of a mean from per-cluster residual sums (Liang-Zeger, G/(G-1) factor)."""
    if mean is None:
        return Interval(None, None, None)
    return Interval(*_interval(mean, n, groups, residual_square_sum, unit_range))
