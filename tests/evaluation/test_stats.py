"""Means with honest uncertainty."""

from __future__ import annotations

import math
import statistics

import pytest

from assay import Client
from assay.evaluation._stats import aggregate, t_quantile


@pytest.mark.parametrize(
    ("df", "expected"), [(1, 12.706), (2, 4.303), (5, 2.571), (10, 2.228), (30, 2.042), (1000, 1.962)]
)
def test_t_quantiles_match_tables(df: int, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=2e-3)


def test_without_clusters_the_standard_error_is_s_over_root_n() -> None:
    scores = [0.0, 10.0, 10.0, 5.0, 2.5, 10.0]  # not a unit-range metric: no clipping
    result = aggregate("m", scores, list(range(6)), errors=2)
    assert result.mean == pytest.approx(statistics.fmean(scores))
    assert result.stderr == pytest.approx(statistics.stdev(scores) / math.sqrt(6))
    half = t_quantile(0.975, 5) * result.stderr
    assert (result.ci_low, result.ci_high) == pytest.approx((result.mean - half, result.mean + half))
    assert (result.n, result.errors) == (6, 2)


def test_repetitions_are_clustered_by_example() -> None:
    # Two examples, each repeated 3 times with identical scores: only two independent units.
    scores = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    clustered = aggregate("m", scores, ["a", "a", "a", "b", "b", "b"], errors=0)
    naive = aggregate("m", scores, list(range(6)), errors=0)
    assert clustered.stderr == pytest.approx(0.5)  # the SE of the mean of two cluster means
    assert clustered.stderr > naive.stderr
    assert (clustered.ci_low, clustered.ci_high) == (0.0, 1.0)  # t with 1 df, clipped
    scaled = aggregate("m", [10 * x for x in scores], ["a", "a", "a", "b", "b", "b"], errors=0)
    assert scaled.ci_high - scaled.ci_low == pytest.approx(2 * 12.706 * 5.0, rel=1e-3)


def test_unit_range_metrics_keep_their_interval_inside_zero_one() -> None:
    scores = [1.0] * 17 + [0.5, 0.5, 0.0]  # continuous, in [0, 1]: t, clipped at 1
    result = aggregate("similarity", scores, list(range(20)), errors=0)
    half = t_quantile(0.975, 19) * result.stderr
    assert result.ci_low == pytest.approx(result.mean - half) and result.ci_high == 1.0
    assert result.method == "Student t"


def test_single_unit_has_no_interval() -> None:
    result = aggregate("m", [1.0, 1.0], ["a", "a"], errors=0)
    assert result.mean == 1.0 and result.stderr is None and result.ci_low is None


def test_results_aggregate_uses_example_clusters(client: Client) -> None:
    def flip(run) -> float:
        return float(run.extra["repetition"] % 2)

    results = client.evaluate(
        lambda inputs: inputs, data=[{"q": i} for i in range(4)], evaluators=[flip], num_repetitions=2
    )
    metric = results.aggregate["flip"]
    assert (metric.mean, metric.n) == (0.5, 8)
    assert metric.stderr == pytest.approx(0.0)  # every example averages exactly 0.5
