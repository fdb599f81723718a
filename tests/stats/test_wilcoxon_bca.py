"""The Wilcoxon signed-rank test and BCa bootstrap intervals, against scipy, alone and
through ``assay.compare``, the aggregates and ``assay compare``."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sp
from stats_testdata import dataset, experiment

import assay
from assay.evaluation._stats import aggregate
from assay.stats.bootstrap import bca_interval
from assay.stats.wilcoxon import signed_rank_p
from assay.store.sqlite import SQLiteStore

RNG = np.random.default_rng(5)


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    store = SQLiteStore(tmp_path / "assay.db")
    yield store
    store.close()


@pytest.mark.parametrize("n", [1, 2, 5, 12, 30, 50])
def test_signed_rank_exact_p_matches_scipy(n: int) -> None:
    for shift in (0.0, 0.3, 1.5):
        d = RNG.normal(shift, 1, n)
        assert signed_rank_p(d) == pytest.approx(sp.wilcoxon(d, method="exact").pvalue, rel=1e-12)


@pytest.mark.parametrize("n", [51, 200, 3000])
def test_signed_rank_normal_approximation_matches_scipy(n: int) -> None:
    d = RNG.normal(0.05, 1, n)
    assert signed_rank_p(d) == pytest.approx(sp.wilcoxon(d, method="approx").pvalue, rel=1e-9)


def test_signed_rank_with_ties_and_zeros_matches_scipy() -> None:
    d = np.round(RNG.normal(0.1, 0.5, 300), 1)  # many ties and some zeros
    assert (d == 0).any() and len(np.unique(np.abs(d))) < 50
    expected = sp.wilcoxon(d, zero_method="wilcox", method="approx").pvalue
    assert signed_rank_p(d) == pytest.approx(expected, rel=1e-9)
    assert signed_rank_p([0.0, 0.0]) == 1.0


def _scipy_bca(data: tuple[np.ndarray, ...], statistic: object, resamples: int) -> tuple[float, float]:
    found = sp.bootstrap(
        data, statistic, method="BCa", n_resamples=resamples, paired=len(data) > 1, random_state=3
    ).confidence_interval
    return float(found.low), float(found.high)


@pytest.mark.parametrize("n", [30, 400])
def test_bca_of_a_skewed_mean_matches_scipy(n: int) -> None:
    x = RNG.exponential(1.0, n) ** 2  # strongly skewed: BCa moves off the percentile interval
    ours = bca_interval(x, resamples=40_000)
    low, high = _scipy_bca((x,), np.mean, 40_000)
    width = high - low
    assert ours.method == "BCa bootstrap"
    assert ours.low == pytest.approx(low, abs=0.03 * width)
    assert ours.high == pytest.approx(high, abs=0.03 * width)
    t_high = x.mean() + sp.t.ppf(0.975, n - 1) * x.std(ddof=1) / np.sqrt(n)
    assert high > t_high  # the skew really shows: BCa's upper end is past Student t's


def test_clustered_bca_resamples_whole_clusters_as_scipy_does() -> None:
    counts = RNG.integers(1, 6, 80)
    sums = np.array([RNG.gamma(2.0, 1.0, k).sum() for k in counts])
    ours = bca_interval(sums, counts, resamples=40_000)
    low, high = _scipy_bca((sums, counts.astype(float)), lambda s, c: s.sum() / c.sum(), 40_000)
    assert ours.method == "BCa bootstrap, clustered by example"
    assert ours.low == pytest.approx(low, abs=0.03 * (high - low))
    assert ours.high == pytest.approx(high, abs=0.03 * (high - low))


def test_bca_covers_the_true_mean_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(17)
    trials = 300
    hits = 0
    for trial in range(trials):
        x = rng.lognormal(0, 0.6, 60)
        found = bca_interval(x, resamples=1000, seed=trial)
        hits += found.low <= np.exp(0.18) <= found.high
    assert 0.89 <= hits / trials <= 0.98


def test_bca_refuses_too_little_data_and_is_exact_without_spread() -> None:
    with pytest.raises(ValueError, match="at least 2 clusters"):
        bca_interval([1.0])
    with pytest.raises(ValueError, match="one length"):
        bca_interval([1.0, 2.0], [1])
    same = bca_interval([0.3] * 10)
    assert (same.low, same.high) == (0.3, 0.3)


def test_aggregate_offers_bca_for_continuous_metrics_only() -> None:
    scores = list(RNG.exponential(0.2, 200))
    clusters = list(range(200))
    bca = aggregate("m", scores, clusters, 0, interval="bca")
    t = aggregate("m", scores, clusters, 0)
    assert bca.method == "BCa bootstrap" and t.method == "Student t"
    assert bca.mean == t.mean and bca.ci_low != t.ci_low
    binary = aggregate("ok", [1.0, 0.0] * 20, list(range(40)), 0, interval="bca")
    assert binary.method == "Wilson"


def _cells(values: np.ndarray) -> list[list[float]]:
    return [[float(v) for v in np.atleast_1d(row)] for row in values]


def test_compare_with_wilcoxon_and_bca_matches_scipy_on_example_means(store: SQLiteStore) -> None:
    ds, examples = dataset(store, 150)
    a = RNG.uniform(0, 1, (150, 2))
    b = np.clip(a + RNG.standard_t(2, (150, 2)) * 0.05 + 0.02, 0, 1)  # heavy tails
    experiment(store, ds, examples, "a", {"sim": _cells(a), "ok": [[True]] * 150})
    experiment(store, ds, examples, "b", {"sim": _cells(b), "ok": [[True]] * 140 + [[False]] * 10})
    d = b.mean(axis=1) - a.mean(axis=1)
    result = assay.compare("a", "b", client=store, test="wilcoxon", interval="bca")
    sim = result["sim"]
    assert sim.test == "Wilcoxon signed-rank"
    assert sim.p_value == pytest.approx(sp.wilcoxon(d, method="approx").pvalue, rel=1e-9)
    assert sim.interval is not None and sim.interval.method == "BCa bootstrap"
    low, high = _scipy_bca((d,), np.mean, 9999)
    assert sim.ci95 == pytest.approx((low, high), abs=0.05 * (high - low))
    assert sim.difference == pytest.approx(d.mean(), rel=1e-9)
    plain = assay.compare("a", "b", client=store)["sim"]
    assert plain.test == "paired t" and plain.interval is not None and plain.interval.method == "Student t"
    assert result["ok"].test == "exact McNemar"  # 0/1 metrics keep the exact test


def test_compare_options_are_checked(store: SQLiteStore) -> None:
    ds, examples = dataset(store, 10)
    experiment(store, ds, examples, "a", {"m": [[0.1 * i] for i in range(10)]})
    experiment(store, ds, examples, "b", {"m": [[0.1 * i + 0.05] for i in range(10)]})
    with pytest.raises(ValueError, match="test must be 't' or 'wilcoxon'"):
        assay.compare("a", "b", client=store, test="sign")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="interval must be 't' or 'bca'"):
        assay.compare("a", "b", client=store, interval="percentile")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="with cluster_by"):
        assay.compare("a", "b", client=store, test="wilcoxon", cluster_by="doc")


def test_cli_compare_names_the_test_and_interval(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    ds, examples = dataset(store, 40)
    experiment(store, ds, examples, "a", {"m": [[0.02 * i] for i in range(40)]})
    experiment(store, ds, examples, "b", {"m": [[0.02 * i + 0.01 * (i % 3)] for i in range(40)]})
    store.close()
    command = [sys.executable, "-m", "assay.cli", "--db", "s.db", "compare", "a", "b"]
    options = ["--test", "wilcoxon", "--interval", "bca"]
    env = {**os.environ, "COLUMNS": "240"}
    shown = subprocess.run(
        [*command, *options], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env
    )
    assert shown.returncode == 0, shown.stderr
    assert "Wilcoxon signed-rank" in shown.stdout and "BCa bootstrap" in shown.stdout
    as_json = subprocess.run(
        [*command, *options, "--json"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    metric = json.loads(as_json.stdout)["metrics"][0]
    assert metric["test"] == "Wilcoxon signed-rank" and metric["ci_method"] == "BCa bootstrap"


def test_the_bca_interval_does_not_depend_on_the_order_of_the_clusters() -> None:
    """Two readers of one experiment (by example id, by position) hand the same values in
    other orders: one interval, to the last bit."""
    rng = random.Random(11)
    x = [rng.choice([0.0, 0.5, 1.0, 1.5, -1.0]) + rng.random() / 8 for _ in range(40)]
    counts = [rng.randint(1, 3) for _ in x]
    for _ in range(5):
        order = list(range(len(x)))
        rng.shuffle(order)
        assert bca_interval([x[i] for i in order], resamples=2000) == bca_interval(x, resamples=2000)
        clustered = bca_interval([x[i] for i in order], [counts[i] for i in order], resamples=2000)
        assert clustered == bca_interval(x, counts, resamples=2000)


def test_the_bca_interval_does_not_jump_with_the_last_bit_of_a_value() -> None:
    """The same scores averaged in another order differ in their last bit; on a small
    sample that must not move the interval to another replicate."""
    cases = (
        [1.1666666666666667, 0.3, 0.3333333333333333, 0.3],
        [0.7, -1.0, 0.3, 0.16666666666666666, 0.2],
        [0.3, -1.0, 0.3333333333333333],
        [1.1666666666666667, 0.6666666666666666, 1.1666666666666667, 1.0],
    )
    for values in cases:
        nudged = [math.nextafter(values[0], -math.inf), *values[1:]]
        ours, theirs = bca_interval(values, resamples=2000), bca_interval(nudged, resamples=2000)
        assert math.isclose(ours.low, theirs.low, rel_tol=1e-12, abs_tol=1e-12)
        assert math.isclose(ours.high, theirs.high, rel_tol=1e-12, abs_tol=1e-12)
