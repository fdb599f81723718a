"""The agreement statistics against scikit-learn and scipy on generated data: the estimate,
and every bootstrap replicate (so the interval is the percentile of the right numbers)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score

from assay.stats import agreement as stats


def noisy_ordinal(n: int, seed: int, levels: int = 5) -> tuple[list[int], list[int]]:
    rng = np.random.default_rng(seed)
    human = [int(v) for v in rng.integers(1, levels + 1, n)]
    judge = [min(levels, max(1, h + int(d))) for h, d in zip(human, rng.integers(-1, 2, n), strict=True)]
    return judge, human


@pytest.mark.parametrize("weights", ["none", "linear", "quadratic"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kappa_matches_scikit_learn(weights: stats.Weights, seed: int) -> None:
    judge, human = noisy_ordinal(257, seed)
    rows = stats.LabelledRows({"judge": judge, "human": human})
    found = stats.estimates(rows, {"kappa": stats.cohen_kappa(rows.pair("judge", "human"), weights)})
    expected = cohen_kappa_score(
        judge, human, weights=None if weights == "none" else weights, labels=[1, 2, 3, 4, 5]
    )
    assert found["kappa"].value == pytest.approx(expected, abs=1e-12)
    assert found["kappa"].n == 257


def test_text_labels_and_a_category_only_one_rater_used() -> None:
    judge = ["pass", "fail", "pass", "unsure", "pass", "fail", "fail", "pass"]
    human = ["pass", "fail", "fail", "fail", "pass", "pass", "fail", "pass"]
    rows = stats.LabelledRows({"judge": judge, "human": human})
    pair = rows.pair("judge", "human")
    found = stats.estimates(rows, {"kappa": stats.cohen_kappa(pair), "accuracy": stats.accuracy(pair)})
    assert found["kappa"].value == pytest.approx(cohen_kappa_score(judge, human))
    assert found["accuracy"].value == pytest.approx(5 / 8)


@pytest.mark.parametrize("kind", ["ordinal", "continuous", "ties"])
def test_spearman_matches_scipy(kind: str) -> None:
    rng = np.random.default_rng(7)
    if kind == "ordinal":
        first, second = noisy_ordinal(300, 7)
    else:
        x = rng.random(300)
        if kind == "ties":
            x = np.round(x * 4) / 4  # many ties on one side
        first, second = [float(v) for v in x], [float(v) for v in x + rng.random(300)]
    rows = stats.LabelledRows({"a": first, "b": second})
    found = stats.estimates(rows, {"rho": stats.spearman(rows.pair("a", "b"))})
    assert found["rho"].value == pytest.approx(spearmanr(first, second).statistic, abs=1e-12)


def test_every_bootstrap_replicate_is_the_statistic_of_a_resample() -> None:
    """Each replicate's pattern weights, expanded back to rows, give scikit-learn's kappa and
    scipy's rho on that resample; the interval is their 2.5 and 97.5 percentiles."""
    judge, human = noisy_ordinal(120, 3)
    rows = stats.LabelledRows({"judge": judge, "human": human})
    pair = rows.pair("judge", "human")
    kappa, rho = stats.cohen_kappa(pair, "quadratic"), stats.spearman(pair)
    (weights,) = list(stats.bootstrap_weights(rows, resamples=200, seed=5))
    assert weights.shape == (200, len(rows.counts)) and np.all(weights.sum(axis=1) == 120)
    pattern_judge = [pair.categories[c] for c in pair.first]
    pattern_human = [pair.categories[c] for c in pair.second]
    ours_kappa, ours_rho = kappa(weights), rho(weights)
    for line in range(0, 200, 20):
        repeat = weights[line].astype(int)
        a, b = np.repeat(pattern_judge, repeat), np.repeat(pattern_human, repeat)
        assert ours_kappa[line] == pytest.approx(
            cohen_kappa_score(a, b, weights="quadratic", labels=[1, 2, 3, 4, 5]), abs=1e-12
        )
        assert ours_rho[line] == pytest.approx(spearmanr(a, b).statistic, abs=1e-12)
    found = stats.estimates(rows, {"kappa": kappa}, resamples=200, seed=5)
    assert found["kappa"].interval is not None
    low, high = np.percentile(ours_kappa, [2.5, 97.5])
    assert (found["kappa"].interval.low, found["kappa"].interval.high) == pytest.approx((low, high))


def test_continuous_replicates_draw_rows_and_match_scipy() -> None:
    rng = np.random.default_rng(11)
    x = rng.random(700)  # more patterns than a multinomial draw handles: rows are drawn
    rows = stats.LabelledRows({"a": list(x), "b": list(x + rng.random(700))})
    pair = rows.pair("a", "b")
    (weights,) = list(stats.bootstrap_weights(rows, resamples=100, seed=1))
    values = pair.values()
    ours = stats.spearman(pair)(weights)
    for line in (0, 37, 99):
        repeat = weights[line].astype(int)
        expected = spearmanr(np.repeat(values[pair.first], repeat), np.repeat(values[pair.second], repeat))
        assert ours[line] == pytest.approx(expected.statistic, abs=1e-12)


def test_interval_covers_the_true_kappa_about_95_percent_of_the_time() -> None:
    """A population whose kappa is known: 200 samples of 150 rows, ~95% coverage."""
    rng = np.random.default_rng(2024)
    population = noisy_ordinal(200_000, 99)
    truth = cohen_kappa_score(*population)
    covered = 0
    for trial in range(200):
        picks = rng.integers(0, 200_000, 150)
        rows = stats.LabelledRows(
            {"judge": [population[0][i] for i in picks], "human": [population[1][i] for i in picks]}
        )
        interval = stats.estimates(
            rows, {"k": stats.cohen_kappa(rows.pair("judge", "human"))}, resamples=500, seed=trial
        )["k"].interval
        assert interval is not None
        covered += interval.low <= truth <= interval.high
    assert 0.90 <= covered / 200 <= 0.99


def test_the_paired_difference_uses_the_same_draws() -> None:
    """Two judges on one set of rows: the difference's interval is narrower than either
    judge's own (their errors move together), and its estimate is the difference."""
    judge, human = noisy_ordinal(400, 4)
    rng = np.random.default_rng(4)
    better = [h if rng.random() < 0.8 else j for j, h in zip(judge, human, strict=True)]
    rows = stats.LabelledRows({"a": judge, "b": better, "human": human})
    a = stats.cohen_kappa(rows.pair("a", "human"))
    b = stats.cohen_kappa(rows.pair("b", "human"))
    found = stats.estimates(rows, {"a": a, "b": b, "diff": lambda w: b(w) - a(w)})
    assert found["diff"].value == pytest.approx(found["b"].value - found["a"].value)
    diff = found["diff"].interval
    assert diff is not None and diff.low > 0  # b agrees better, and the interval says so
    width = diff.high - diff.low
    assert found["a"].interval is not None
    # paired draws cancel the rows both judges find hard: narrower than one judge alone
    assert width < found["a"].interval.high - found["a"].interval.low


def test_one_category_only_gives_an_undefined_kappa_not_a_number() -> None:
    rows = stats.LabelledRows({"judge": [1, 1, 1], "human": [1, 1, 1]})
    found = stats.estimates(rows, {"k": stats.cohen_kappa(rows.pair("judge", "human"))})
    assert found["k"].value is None and found["k"].n == 3


def test_ten_thousand_rows_stay_cheap() -> None:
    """Not a timing: the number of patterns, which is what a replicate costs."""
    judge, human = noisy_ordinal(10_000, 8)
    rows = stats.LabelledRows({"judge": judge, "human": human})
    assert len(rows.counts) <= 25 and rows.counts.sum() == 10_000
