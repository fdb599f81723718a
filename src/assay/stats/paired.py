"""Paired tests of B against A on the same examples, from sufficient statistics.

Callers pass sums (computed in SQL over any number of rows), never the rows, so a
million-row comparison costs what a ten-row one does here.

- 0/1 metrics, one score per example: exact McNemar test (a sign test on the discordant
  pairs) for the p-value, Newcombe's hybrid score interval (method 10) for the difference.
- anything else (continuous scores, or 0/1 averaged over repetitions): paired t on the
  per-example (or per-cluster) differences, with cluster-robust standard errors when
  examples are grouped by a metadata key.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from assay.stats._distributions import normal_quantile, sign_test_p, t_quantile, t_two_sided_p
from assay.stats.intervals import CONFIDENCE, Interval, student_t, wilson

__all__ = [
    "ALPHA",
    "POWER",
    "BinaryPairs",
    "Differences",
    "PairedTest",
    "holm",
    "mcnemar",
    "newcombe",
    "paired_t",
]

POWER = 0.80
ALPHA = 1 - CONFIDENCE


@dataclass(frozen=True)
class PairedTest:
    """The difference B - A, its interval, a two-sided p-value and the smallest true
    difference this many pairs would detect with 80% power at alpha 0.05."""

    difference: float
    interval: Interval | None
    p_value: float
    test: str
    mde: float | None


@dataclass(frozen=True)
class BinaryPairs:
    """Counts of (A, B) outcomes over paired examples scored 0 or 1."""

    both: int  # A 1, B 1
    only_a: int  # A 1, B 0
    only_b: int  # A 0, B 1
    neither: int

    @property
    def n(self) -> int:
        return self.both + self.only_a + self.only_b + self.neither


def mcnemar(pairs: BinaryPairs) -> PairedTest:
    n = pairs.n
    if n == 0:
        raise ValueError("a paired test needs at least one pair")
    difference = (pairs.only_b - pairs.only_a) / n
    if pairs.only_a == pairs.only_b:
        difference = 0.0  # exactly, not 1e-17
    p_value = sign_test_p(pairs.only_b, pairs.only_a + pairs.only_b)
    # The spread of the per-example difference (values -1, 0, 1) sets the MDE.
    discordant = (pairs.only_a + pairs.only_b) / n
    variance = max(discordant - difference * difference, 0.0)
    # No discordant pair shows no spread: no power figure (it would read "detects 0").
    mde = _mde(math.sqrt(variance / n), df=None) if n > 1 and variance > 0 else None
    return PairedTest(difference, newcombe(pairs), p_value, "exact McNemar", mde)


def newcombe(pairs: BinaryPairs) -> Interval:
    """Newcombe's (1998) method 10 for a difference of paired proportions, B - A."""
    a, b, c, d, n = pairs.both, pairs.only_a, pairs.only_b, pairs.neither, pairs.n
    p_a, p_b = (a + b) / n, (a + c) / n
    low_a, high_a = _wilson_bounds(a + b, n)
    low_b, high_b = _wilson_bounds(a + c, n)
    product = (a + b) * (c + d) * (a + c) * (b + d)
    phi = (a * d - b * c) / math.sqrt(product) if product > 0 else 0.0
    difference = p_b - p_a if b != c else 0.0
    below = math.sqrt(
        max((p_b - low_b) ** 2 - 2 * phi * (p_b - low_b) * (high_a - p_a) + (high_a - p_a) ** 2, 0.0)
    )
    above = math.sqrt(
        max((high_b - p_b) ** 2 - 2 * phi * (high_b - p_b) * (p_a - low_a) + (p_a - low_a) ** 2, 0.0)
    )
    return Interval(max(difference - below, -1.0), min(difference + above, 1.0), "Newcombe")


def _wilson_bounds(successes: int, n: int) -> tuple[float, float]:
    interval = wilson(successes, n)
    return interval.low, interval.high


@dataclass(frozen=True)
class Differences:
    """Sufficient statistics of per-unit differences d = B - A: count, sum, sum of squares.

    With clusters, ``cluster_sums`` holds (count, sum of d) per cluster; the standard error
    is then cluster-robust (Liang-Zeger, G/(G-1) small-sample factor) on G - 1 df."""

    n: int
    total: float
    squares: float
    cluster_sums: Sequence[tuple[int, float]] | None = None


def paired_t(diffs: Differences) -> PairedTest:
    n = diffs.n
    if n == 0:
        raise ValueError("a paired test needs at least one pair")
    mean = diffs.total / n
    if diffs.cluster_sums is not None:
        groups = len(diffs.cluster_sums)
        residuals = math.fsum((s - k * mean) ** 2 for k, s in diffs.cluster_sums)
        variance_of_mean = residuals * groups / max(groups - 1, 1) / (n * n)
        df, test = groups - 1, "paired t, clustered"
    else:
        sample_variance = max(diffs.squares - n * mean * mean, 0.0) / max(n - 1, 1)
        variance_of_mean = sample_variance / n
        df, test = n - 1, "paired t"
    if df < 1:
        return PairedTest(mean, None, 1.0, test, None)
    stderr = math.sqrt(variance_of_mean)
    if stderr <= _rounding_noise(diffs, mean):
        # Every difference the same: exact unless they are all zero.
        return PairedTest(mean, Interval(mean, mean, "Student t"), 1.0 if mean == 0 else 0.0, test, None)
    t = mean / stderr
    interval = student_t(mean, stderr, df)
    return PairedTest(mean, interval, t_two_sided_p(t, df), test, _mde(stderr, df))


def _rounding_noise(diffs: Differences, mean: float) -> float:
    """A standard error this small is cancellation in sum-of-squares, not spread."""
    return 1e-12 * max(abs(mean), math.sqrt(abs(diffs.squares) / max(diffs.n, 1)), 1e-300)


def _mde(stderr: float, df: int | None) -> float:
    if df is None:
        return (normal_quantile(1 - ALPHA / 2) + normal_quantile(POWER)) * stderr
    return (t_quantile(1 - ALPHA / 2, df) + t_quantile(POWER, df)) * stderr


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (step-down, monotone, capped at 1)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
