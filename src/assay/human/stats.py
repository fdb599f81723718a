"""The mean of people's scores on a key: each row's annotators averaged first, then the
rows, with a 95% interval (Wilson when every row is up or down, else Student's t)."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from assay.human.labels import Label
from assay.stats.intervals import Interval, Range, student_t, wilson

__all__ = ["HumanMean", "human_mean"]


@dataclass(frozen=True)
class HumanMean:
    mean: float | None
    interval: Interval | None
    rows: int
    labels: int


def human_mean(labels: Sequence[Label], key: str, bounds: Range, thumbs: bool = False) -> HumanMean:
    per_row: dict[str, list[float]] = defaultdict(list)
    for label in labels:
        if label.key == key and label.score is not None:
            per_row[label.run_id].append(float(label.score))
    row_means = [statistics.fmean(scores) for scores in per_row.values()]
    if not row_means:
        return HumanMean(None, None, 0, 0)
    count = sum(len(scores) for scores in per_row.values())
    return HumanMean(statistics.fmean(row_means), _interval(row_means, bounds, thumbs), len(row_means), count)


def _interval(row_means: list[float], bounds: Range, thumbs: bool) -> Interval | None:
    n = len(row_means)
    if thumbs and all(v in (0.0, 1.0) for v in row_means):
        return wilson(sum(row_means), n)
    if n < 2:
        return None
    stderr = statistics.stdev(row_means) / math.sqrt(n)
    return student_t(statistics.fmean(row_means), stderr, n - 1).clipped(bounds)
