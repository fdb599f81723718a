"""The verdicts behave as stated: A/A gives no detectable difference ~95% of the time,
and a true effect of the stated MDE is detected ~80% of the time.

Each simulation runs a fixed-seed number of trials; the bands are about four binomial
standard errors wide (a band that a correct implementation misses with probability
below 1e-4), and are asymmetric where the test is known to be conservative.
"""

from __future__ import annotations

import numpy as np

from assay.stats._distributions import normal_quantile, t_quantile
from assay.stats.paired import ALPHA, BinaryPairs, Differences, PairedTest, mcnemar, paired_t

TRIALS = 2000  # binomial SE of a rate p: sqrt(p(1-p)/2000): 0.0049 at 0.95, 0.0089 at 0.80


def _continuous(d: np.ndarray) -> list[PairedTest]:
    totals, squares = d.sum(axis=1), (d * d).sum(axis=1)
    n = d.shape[1]
    return [paired_t(Differences(n, float(t), float(s))) for t, s in zip(totals, squares)]


def _binary(a: np.ndarray, b: np.ndarray) -> list[PairedTest]:
    both = (a & b).sum(axis=1)
    only_a = (a & ~b).sum(axis=1)
    only_b = (~a & b).sum(axis=1)
    neither = (~a & ~b).sum(axis=1)
    return [
        mcnemar(BinaryPairs(int(w), int(x), int(y), int(z)))
        for w, x, y, z in zip(both, only_a, only_b, neither)
    ]


def _detected(tests: list[PairedTest]) -> float:
    return sum(t.p_value < ALPHA for t in tests) / len(tests)


def test_aa_continuous_scores_show_no_difference_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(1)
    quality = rng.uniform(0, 1, (TRIALS, 80))  # per-example difficulty, shared by A and B
    a = np.clip(quality + rng.normal(0, 0.15, quality.shape), 0, 1)
    b = np.clip(quality + rng.normal(0, 0.15, quality.shape), 0, 1)
    rate = 1 - _detected(_continuous(b - a))
    assert 0.93 <= rate <= 0.97, rate


def test_aa_binary_scores_show_no_difference_at_least_95_percent_of_the_time() -> None:
    # Exact McNemar is conservative: its false alarm rate is at most alpha.
    rng = np.random.default_rng(2)
    solvable = rng.uniform(0, 1, (TRIALS, 150))
    a = rng.uniform(0, 1, solvable.shape) < solvable
    b = rng.uniform(0, 1, solvable.shape) < solvable
    rate = 1 - _detected(_binary(a, b))
    assert 0.94 <= rate <= 0.99, rate


def test_a_true_effect_at_the_stated_mde_is_detected_80_percent_of_the_time() -> None:
    rng = np.random.default_rng(3)
    n, sigma = 60, 0.2
    mde = (t_quantile(1 - ALPHA / 2, n - 1) + t_quantile(0.8, n - 1)) * sigma / np.sqrt(n)
    d = rng.normal(mde, sigma, (TRIALS, n))
    tests = _continuous(d)
    stated = np.array([t.mde for t in tests], dtype=float)
    # The MDE each comparison states (from its own spread) centres on the true one.
    assert abs(np.median(stated) / mde - 1) < 0.02
    # The noncentral-t power at this MDE is 0.80 up to the t approximation (< 0.01 here).
    assert 0.765 <= _detected(tests) <= 0.835


def test_a_true_binary_effect_at_the_stated_mde_is_detected_about_80_percent_of_the_time() -> None:
    rng = np.random.default_rng(4)
    n, discordant = 400, 0.25
    # A difference delta with discordance q has per-example variance q - delta^2.
    z = normal_quantile(1 - ALPHA / 2) + normal_quantile(0.8)
    delta = z * np.sqrt(discordant / n) / np.sqrt(1 + z * z / n)
    p_only_b, p_only_a = (discordant + delta) / 2, (discordant - delta) / 2
    draws = rng.multinomial(n, [p_only_a, p_only_b, 1 - discordant], size=TRIALS)
    tests = [mcnemar(BinaryPairs(int(x[2]), int(x[0]), int(x[1]), 0)) for x in draws]
    stated = np.median([t.mde for t in tests if t.mde is not None])
    assert abs(stated / delta - 1) < 0.05
    # Exact McNemar is a little conservative against the normal-approximation MDE.
    assert 0.74 <= _detected(tests) <= 0.835
