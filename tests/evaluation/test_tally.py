"""A 0/1 metric's figures come from counts kept as scores arrive (no pass over a million
scores); they must be exactly what the general computation over the scores gives."""

from __future__ import annotations

import random

import pytest

from assay._metric import MetricInfo
from assay.evaluation._stats import aggregate
from assay.evaluation._tally import ResultTally, RowTally, Tally, _histogram
from assay.store.records import MetricStats


def _general(tally: Tally, key: str) -> MetricStats:
    metric = tally._metrics[key]
    scores, clusters = metric.scores, metric.clusters
    agg = aggregate(key, scores, clusters, metric.errors, skipped=metric.skipped, info=metric.info)
    low, high = (min(scores), max(scores)) if scores else (None, None)
    return MetricStats(
        key=key,
        mean=agg.mean,
        n=agg.n,
        errors=metric.errors,
        unscored=metric.unscored,
        stderr=agg.stderr,
        ci_low=agg.ci_low,
        ci_high=agg.ci_high,
        min=low,
        max=high,
        histogram=_histogram(scores, low, high),
        skipped=metric.skipped,
        ci_method=agg.method,
        direction=agg.direction,
        score_range=agg.score_range,
        binary=bool(scores) and not metric.non_binary,
    )


def _tally(rows: list[tuple[int, list[float | None]]], info: dict | None = None) -> Tally:
    tally = Tally()
    for position, scores in rows:
        results = tuple(ResultTally("m", s, s is None and position % 7 == 0, None, info) for s in scores)
        tally.add(RowTally(position, False, 1.0, results))
    return tally


CASES = {
    "mixed": [(i, [float(i % 3 == 0)]) for i in range(500)],
    "all ones": [(i, [1.0]) for i in range(50)],
    "all zeros, -0.0 first": [(i, [-0.0 if i == 0 else 0.0]) for i in range(40)],
    "all zeros, 0.0 first": [(i, [0.0 if i == 0 else -0.0]) for i in range(40)],
    "one score": [(0, [1.0])],
    "errors and unscored": [(i, [None if i % 5 == 0 else 1.0]) for i in range(60)],
    "positions out of order, sparse": [
        (p, [float(p % 2)]) for p in random.Random(3).sample(range(10_000), 300)
    ],
    "a position twice (repetitions)": [(i // 2, [float(i % 2)]) for i in range(80)],
    "a key twice in one row": [(i, [1.0, 0.0]) for i in range(30)],
    "not 0/1": [(i, [i / 10]) for i in range(30)],
    "one repeat at the end": [(i, [1.0]) for i in range(30)] + [(3, [0.0])],
}


COUNTED = {"mixed", "all ones", "all zeros, -0.0 first", "all zeros, 0.0 first", "one score"}
COUNTED |= {"errors and unscored", "positions out of order, sparse"}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize(
    "info", [None, {"direction": "lower"}, {"score_range": [0, 2]}, {"score_range": [0, 1]}]
)
def test_figures_from_counts_equal_the_pass_over_the_scores(case: str, info: dict | None) -> None:
    tally = _tally(CASES[case], info)
    assert tally._metrics["m"]._counted == (case in COUNTED)  # the path under test is taken
    got = tally.stats().metrics[0]
    expected = _general(tally, "m")
    assert got == expected
    assert repr(got.mean) == repr(expected.mean) and repr(got.min) == repr(expected.min)  # -0.0 too
    assert tally.aggregates()["m"] == aggregate(
        "m",
        tally._metrics["m"].scores,
        tally._metrics["m"].clusters,
        tally._metrics["m"].errors,
        skipped=tally._metrics["m"].skipped,
        info=MetricInfo.of(info) if info else None,
    )
