"""assay's statistics against scipy and statsmodels on generated data."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from scipy import stats as sp
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from assay.stats._distributions import betainc, sign_test_p, t_quantile, t_two_sided_p
from assay.stats.intervals import wilson
from assay.stats.paired import BinaryPairs, Differences, holm, mcnemar, paired_t

RNG = np.random.default_rng(20261201)


@pytest.mark.parametrize("a", [0.5, 1.0, 2.5, 10.0, 400.0])
@pytest.mark.parametrize("b", [0.5, 1.0, 3.0, 50.0])
def test_incomplete_beta_matches_scipy(a: float, b: float) -> None:
    for x in np.linspace(0.001, 0.999, 37):
        assert betainc(a, b, float(x)) == pytest.approx(sp.beta.cdf(x, a, b), rel=1e-9, abs=1e-13)


@pytest.mark.parametrize("df", [1, 2, 3, 7, 30, 999, 100_000])
def test_t_tails_and_quantiles_match_scipy(df: int) -> None:
    for t in [0.0, 0.1, 1.0, 1.96, 3.5, 12.0]:
        assert t_two_sided_p(t, df) == pytest.approx(2 * sp.t.sf(t, df), rel=1e-9, abs=1e-15)
    for p in [0.6, 0.8, 0.95, 0.975, 0.995]:
        assert t_quantile(p, df) == pytest.approx(sp.t.ppf(p, df), rel=1e-9)


@pytest.mark.parametrize("n", [1, 2, 9, 40, 1001, 20_000])
def test_sign_test_matches_scipy_binomtest(n: int) -> None:
    for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        if 0 <= k <= n:
            expected = sp.binomtest(k, n, 0.5).pvalue
            assert sign_test_p(k, n) == pytest.approx(expected, rel=1e-8, abs=1e-300)


@pytest.mark.parametrize("n", [1, 5, 20, 333])
def test_wilson_matches_statsmodels(n: int) -> None:
    for k in sorted({0, 1, n // 2, n - 1, n}):
        low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
        interval = wilson(k, n)
        assert (interval.low, interval.high) == pytest.approx((low, high), abs=1e-12)
    assert wilson(n, n).high == 1.0 and wilson(0, n).low == 0.0  # exactly


def test_paired_t_matches_scipy_ttest_rel() -> None:
    for n in [3, 12, 250]:
        a = RNG.normal(0.5, 0.2, n)
        b = a + RNG.normal(0.03, 0.1, n)
        d = b - a
        ours = paired_t(Differences(n, float(d.sum()), float((d * d).sum())))
        theirs = sp.ttest_rel(b, a)
        assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-7)
        ci = theirs.confidence_interval(0.95)
        assert ours.interval is not None
        assert (ours.interval.low, ours.interval.high) == pytest.approx((ci.low, ci.high), rel=1e-7)
        assert ours.test == "paired t"


def test_clustered_paired_t_matches_statsmodels_cluster_robust_ols() -> None:
    import statsmodels.api as sm

    clusters = np.repeat(np.arange(30), RNG.integers(1, 6, 30))
    shared = RNG.normal(0, 0.3, 30)[clusters]  # questions of one document move together
    d = 0.05 + shared + RNG.normal(0, 0.2, len(clusters))
    sums = [(int((clusters == g).sum()), float(d[clusters == g].sum())) for g in range(30)]
    ours = paired_t(Differences(len(d), float(d.sum()), float((d * d).sum()), sums))
    fit = sm.OLS(d, np.ones(len(d))).fit(cov_type="cluster", cov_kwds={"groups": clusters})
    # statsmodels' small-sample factor is G/(G-1) * (N-1)/(N-K); with K = 1 it is ours.
    stderr = float(fit.bse[0])
    expected_p = 2 * sp.t.sf(abs(fit.params[0] / stderr), 29)
    assert ours.difference == pytest.approx(float(fit.params[0]), rel=1e-12)
    assert ours.p_value == pytest.approx(expected_p, rel=1e-7)
    assert ours.interval is not None
    half = sp.t.ppf(0.975, 29) * stderr
    assert ours.interval.high - ours.interval.low == pytest.approx(2 * half, rel=1e-7)
    assert ours.test == "paired t, clustered"


@pytest.mark.parametrize(("b", "c"), [(0, 0), (1, 0), (5, 9), (30, 12), (400, 460), (3000, 2900)])
def test_exact_mcnemar_matches_statsmodels(b: int, c: int) -> None:
    pairs = BinaryPairs(both=50, only_a=b, only_b=c, neither=20)
    expected = sm_mcnemar([[50, b], [c, 20]], exact=True).pvalue
    assert mcnemar(pairs).p_value == pytest.approx(expected, rel=1e-8)
    assert mcnemar(pairs).test == "exact McNemar"


def test_holm_matches_statsmodels(monkeypatch: pytest.MonkeyPatch) -> None:
    # statsmodels' Holm runs a full gc.collect() per call, ~0.4 s each in a process that
    # holds a collected suite: its memory housekeeping, not its arithmetic
    monkeypatch.setattr(gc, "collect", lambda generation=2: 0)
    for _ in range(20):
        p = RNG.uniform(0, 0.2, int(RNG.integers(1, 9))).tolist()
        expected = multipletests(p, alpha=0.05, method="holm")[1]
        assert holm(p) == pytest.approx(list(expected), rel=1e-12)


def test_identical_samples_give_an_exact_zero_and_p_one() -> None:
    scores = RNG.uniform(0, 1, 50)
    d = scores - scores
    result = paired_t(Differences(50, float(d.sum()), float((d * d).sum())))
    assert result.difference == 0.0 and result.p_value == 1.0
    assert result.interval is not None and (result.interval.low, result.interval.high) == (0.0, 0.0)
    binary = mcnemar(BinaryPairs(30, 0, 0, 20))
    assert binary.difference == 0.0 and binary.p_value == 1.0
    assert binary.interval is not None and binary.interval.low <= 0.0 <= binary.interval.high


def test_newcombe_interval_covers_the_true_difference_95_percent_of_the_time() -> None:
    # 2,000 trials: the coverage estimate has a standard error of about 0.005, so
    # [0.93, 0.975] is a band of about four standard errors around 0.95 (Newcombe's
    # method is slightly conservative).
    trials, n = 2000, 60
    probabilities = np.array([0.5, 0.1, 0.2, 0.2])  # both, only A, only B, neither
    true_difference = probabilities[2] - probabilities[1]
    counts = RNG.multinomial(n, probabilities, size=trials)
    covered = 0
    for both, only_a, only_b, neither in counts:
        interval = mcnemar(BinaryPairs(int(both), int(only_a), int(only_b), int(neither))).interval
        assert interval is not None
        covered += interval.low <= true_difference <= interval.high
    assert 0.93 <= covered / trials <= 0.975
