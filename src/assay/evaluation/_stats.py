"""Means with honest uncertainty: intervals that fit the metric, clustered by example.

- 0/1 metrics with one score per example: Wilson score interval (sensible at 0/n and n/n,
  where a t interval has zero width).
- anything else: Student's t. With repetitions, rows of one example are not independent,
  so the standard error is clustered by example (Liang-Zeger with the G/(G-1)
  small-sample factor) on G - 1 degrees of freedom; without repetitions it reduces to
  the usual s / sqrt(n).

Every interval is clipped to the metric's range (declared, else [0, 1] when every score
lies there) and carries its method's name. The UI computes the same from SQL sums with
:func:`mean_interval`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

from assay._metric import UNIT_RANGE, Direction, MetricInfo, Range
from assay.stats import t_quantile
from assay.stats.bootstrap import bca_interval
from assay.stats.intervals import Interval, student_t, wilson

__all__ = ["MetricAggregate", "aggregate", "clustered_interval", "mean_interval", "t_quantile"]


@dataclass(frozen=True)
class MetricAggregate:
    """One metric of one experiment: its mean over scored results, their count ``n``, how
    many results were errors and how many were skipped (failed target), and the 95%
    interval with the name of its method."""

    key: str
    mean: float | None
    n: int
    errors: int
    stderr: float | None
    ci_low: float | None
    ci_high: float | None
    skipped: int = 0
    method: str | None = None
    direction: Direction = "higher"
    score_range: Range | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "mean": self.mean,
            "n": self.n,
            "errors": self.errors,
            "skipped": self.skipped,
            "stderr": self.stderr,
            "ci95": (self.ci_low, self.ci_high) if self.ci_low is not None else None,
            "ci_method": self.method,
            "direction": self.direction,
            "score_range": list(self.score_range) if self.score_range is not None else None,
        }


def clustered_interval(
    mean: float, n: int, groups: int, residual_square_sum: float | None, unit_range: bool
) -> tuple[float | None, float | None, float | None]:
    """(standard error, low, high) of a mean by clustered Student t, from the sum over
    clusters of the squared per-cluster residual sums; clipped to [0, 1] if ``unit_range``."""
    stderr, interval = mean_interval(
        mean, n, groups, residual_square_sum, binary=False, bounds=UNIT_RANGE if unit_range else None
    )
    if interval is None:
        return stderr, None, None
    return stderr, interval.low, interval.high


def mean_interval(
    mean: float,
    n: int,
    groups: int,
    residual_square_sum: float | None,
    *,
    binary: bool,
    bounds: Range | None,
) -> tuple[float | None, Interval | None]:
    """(standard error, 95% interval) of a mean of ``n`` scores in ``groups`` clusters."""
    if n == 0 or residual_square_sum is None:
        return None, None
    if binary and groups == n:
        stderr = math.sqrt(max(mean * (1 - mean), 0.0) / n)
        return stderr, wilson(round(mean * n), n).clipped(bounds or UNIT_RANGE)
    if groups < 2:
        return None, None
    variance = max(residual_square_sum, 0.0) * groups / (groups - 1)
    stderr = math.sqrt(variance) / n
    method = "Student t" if groups == n else "Student t, clustered by example"
    interval = student_t(mean, stderr, groups - 1, method)
    return stderr, interval.clipped(bounds) if bounds is not None else interval


def aggregate(
    key: str,
    scores: Sequence[float],
    clusters: Sequence[Hashable],
    errors: int,
    *,
    skipped: int = 0,
    info: MetricInfo | None = None,
    interval: Literal["t", "bca"] = "t",
) -> MetricAggregate:
    """The metric's mean and 95% interval. ``interval="bca"`` gives continuous metrics a
    BCa bootstrap interval over examples (repetitions resampled together) instead of
    Student t; 0/1 metrics keep Wilson."""
    info = info or MetricInfo()
    n = len(scores)
    if n == 0:
        return MetricAggregate(
            key, None, 0, errors, None, None, None, skipped, None, info.direction, info.score_range
        )
    mean = math.fsum(scores) / n
    if all(score == mean for score in scores):
        mean = scores[0]  # exactly, not 0.30000000000000004 for ten 0.3s
    residual_sums: dict[Hashable, float] = {}
    for score, cluster in zip(scores, clusters):
        residual_sums[cluster] = residual_sums.get(cluster, 0.0) + (score - mean)
    squares = math.fsum(r * r for r in residual_sums.values())
    binary = all(score == 0.0 or score == 1.0 for score in scores)
    in_unit = min(scores) >= 0.0 and max(scores) <= 1.0
    bounds = info.score_range or (UNIT_RANGE if in_unit else None)
    stderr, bounded = mean_interval(mean, n, len(residual_sums), squares, binary=binary, bounds=bounds)
    if interval == "bca" and bounded is not None and not (binary and len(residual_sums) == n):
        bounded = _bca(scores, clusters, bounds)
    return _aggregate(key, mean, n, errors, stderr, bounded, skipped, info)


def binary_aggregate(
    key: str,
    n: int,
    ones: int,
    first_zero: float | None,
    errors: int,
    *,
    skipped: int = 0,
    info: MetricInfo | None = None,
) -> MetricAggregate:
    """What :func:`aggregate` gives ``n`` scores of 0 and 1, one per cluster, from their
    count of ones (``first_zero``: the first 0 as given, 0.0 or -0.0), in no pass over
    them: the mean and Wilson interval need only the counts."""
    info = info or MetricInfo()
    if ones == n:
        mean = 1.0
    elif ones == 0:
        mean = first_zero if first_zero is not None else 0.0  # every score equal: as given
    else:
        mean = ones / n  # fsum of 0s and 1s is exact, so aggregate's mean is this too
    bounds = info.score_range or UNIT_RANGE
    stderr, bounded = mean_interval(mean, n, n, 0.0, binary=True, bounds=bounds)
    return _aggregate(key, mean, n, errors, stderr, bounded, skipped, info)


def _aggregate(
    key: str,
    mean: float,
    n: int,
    errors: int,
    stderr: float | None,
    bounded: Interval | None,
    skipped: int,
    info: MetricInfo,
) -> MetricAggregate:
    return MetricAggregate(
        key,
        mean,
        n,
        errors,
        stderr,
        bounded.low if bounded else None,
        bounded.high if bounded else None,
        skipped,
        bounded.method if bounded else None,
        info.direction,
        info.score_range,
    )


def _bca(scores: Sequence[float], clusters: Sequence[Hashable], bounds: Range | None) -> Interval:
    sums: dict[Hashable, float] = {}
    counts: dict[Hashable, int] = {}
    for score, cluster in zip(scores, clusters):
        sums[cluster] = sums.get(cluster, 0.0) + score
        counts[cluster] = counts.get(cluster, 0) + 1
    found = bca_interval(list(sums.values()), list(counts.values()))
    return found.clipped(bounds) if bounds is not None else found
