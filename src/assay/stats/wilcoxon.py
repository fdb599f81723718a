"""The Wilcoxon signed-rank test of paired differences, in pure Python.

Zero differences are dropped (Wilcoxon's convention, scipy's default); tied absolute
differences share their mean rank. With at most 50 non-zero differences and no ties the
p-value is exact (the null distribution of the rank sum, counted); otherwise it is the
normal approximation with the tie correction of the variance and no continuity
correction (scipy's ``method="approx"``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["EXACT_LIMIT", "WILCOXON", "signed_rank_p"]

WILCOXON = "Wilcoxon signed-rank"
EXACT_LIMIT = 50


def signed_rank_p(differences: Sequence[float]) -> float:
    """Two-sided p-value of the signed-rank test that the differences centre on 0."""
    nonzero = [d for d in differences if d != 0]
    n = len(nonzero)
    if n == 0:
        return 1.0
    ranks, tie_sizes = _ranks([abs(d) for d in nonzero])
    w_plus = math.fsum(r for r, d in zip(ranks, nonzero) if d > 0)
    if n <= EXACT_LIMIT and not tie_sizes:
        return _exact_p(round(w_plus), n)
    mean = n * (n + 1) / 4
    variance = n * (n + 1) * (2 * n + 1) / 24 - sum(t**3 - t for t in tie_sizes) / 48
    if variance <= 0:
        return 1.0
    z = (w_plus - mean) / math.sqrt(variance)
    return min(1.0, 2 * _normal_upper(abs(z)))


def _ranks(values: list[float]) -> tuple[list[float], list[int]]:
    """Average ranks (1-based) and the sizes of the groups of tied values."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    ties = []
    start = 0
    while start < len(order):
        stop = start
        while stop + 1 < len(order) and values[order[stop + 1]] == values[order[start]]:
            stop += 1
        for position in range(start, stop + 1):
            ranks[order[position]] = (start + stop) / 2 + 1
        if stop > start:
            ties.append(stop - start + 1)
        start = stop + 1
    return ranks, ties


def _exact_p(w_plus: int, n: int) -> float:
    """P(|W - mean| >= |w - mean|) under the null, from the counts of every rank sum."""
    total = n * (n + 1) // 2
    counts = [1] + [0] * total
    for rank in range(1, n + 1):
        for s in range(total, rank - 1, -1):
            counts[s] += counts[s - rank]
    tail = min(w_plus, total - w_plus)
    p = 2 * sum(counts[: tail + 1]) / float(1 << n)
    return min(1.0, p)


def _normal_upper(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2))
