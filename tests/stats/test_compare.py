"""``assay.compare`` on real stored experiments, checked against scipy on the same data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sp
from stats_testdata import dataset, experiment
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

import assay
from assay.store.sqlite import SQLiteStore

RNG = np.random.default_rng(7)


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    store = SQLiteStore(tmp_path / "assay.db")
    yield store
    store.close()


def _column(values: np.ndarray) -> list[list[float]]:
    return [[float(v) for v in np.atleast_1d(row)] for row in values]


def test_continuous_metric_with_repetitions_matches_scipy_on_example_means(store: SQLiteStore) -> None:
    ds, examples = dataset(store, 120)
    base = RNG.uniform(0, 1, (120, 1))
    a = np.clip(base + RNG.normal(0, 0.1, (120, 3)), 0, 1)
    b = np.clip(base + 0.02 + RNG.normal(0, 0.1, (120, 3)), 0, 1)
    experiment(store, ds, examples, "a", {"sim": _column(a)})
    experiment(store, ds, examples, "b", {"sim": _column(b)})
    result = assay.compare("a", "b", client=store)["sim"]
    mean_a, mean_b = a.mean(axis=1), b.mean(axis=1)  # repetitions averaged per example first
    expected = sp.ttest_rel(mean_b, mean_a)
    assert result.n_paired == 120 and result.kind == "continuous" and result.test == "paired t"
    assert result.mean_a == pytest.approx(mean_a.mean(), rel=1e-12)
    assert result.mean_b == pytest.approx(mean_b.mean(), rel=1e-12)
    assert result.difference == pytest.approx((mean_b - mean_a).mean(), rel=1e-9)
    assert result.p_value == pytest.approx(expected.pvalue, rel=1e-7)
    ci = expected.confidence_interval()
    assert result.ci95 == pytest.approx((ci.low, ci.high), rel=1e-7)
    assert result.interval is not None and result.interval.method == "Student t"


def test_binary_metric_uses_exact_mcnemar_on_the_discordant_pairs(store: SQLiteStore) -> None:
    ds, examples = dataset(store, 200)
    a = RNG.uniform(0, 1, 200) < 0.7
    b = np.where(RNG.uniform(0, 1, 200) < 0.15, ~a, a)
    experiment(store, ds, examples, "a", {"correct": [[bool(x)] for x in a]})
    experiment(store, ds, examples, "b", {"correct": [[bool(x)] for x in b]})
    result = assay.compare("a", "b", client=store)["correct"]
    table = [[int((a & b).sum()), int((a & ~b).sum())], [int((~a & b).sum()), int((~a & ~b).sum())]]
    assert result.kind == "binary" and result.test == "exact McNemar"
    assert result.p_value == pytest.approx(sm_mcnemar(table, exact=True).pvalue, rel=1e-9)
    assert result.difference == pytest.approx(b.mean() - a.mean(), abs=1e-12)
    assert result.interval is not None and result.interval.method == "Newcombe"


def test_clustering_by_a_metadata_key_widens_the_interval(store: SQLiteStore) -> None:
    documents = [{"doc": i // 6} for i in range(120)]
    ds, examples = dataset(store, 120, documents)
    shared = np.repeat(RNG.normal(0, 0.3, 20), 6)
    a = RNG.normal(0.5, 0.1, 120)
    b = a + 0.03 + shared + RNG.normal(0, 0.05, 120)
    experiment(store, ds, examples, "a", {"m": _column(a)})
    experiment(store, ds, examples, "b", {"m": _column(b)})
    plain = assay.compare("a", "b", client=store)["m"]
    clustered = assay.compare("a", "b", client=store, cluster_by="doc")["m"]
    assert clustered.test == "paired t, clustered"
    assert clustered.difference == pytest.approx(plain.difference)
    assert clustered.ci95 is not None and plain.ci95 is not None
    assert clustered.ci95[1] - clustered.ci95[0] > 1.5 * (plain.ci95[1] - plain.ci95[0])
    d = b - a
    per_doc = d.reshape(20, 6).mean(axis=1)  # equal cluster sizes: the cluster means' t test
    assert clustered.p_value == pytest.approx(sp.ttest_1samp(per_doc, 0).pvalue, rel=1e-6)


def test_identical_experiments_are_exactly_equal(store: SQLiteStore) -> None:
    ds, examples = dataset(store, 50)
    scores = {"sim": _column(RNG.uniform(0, 1, 50)), "ok": [[bool(x)] for x in RNG.uniform(0, 1, 50) < 0.5]}
    experiment(store, ds, examples, "a", scores)
    experiment(store, ds, examples, "b", scores)
    comparison = assay.compare("a", "b", client=store)
    for metric in comparison.metrics:
        assert metric.difference == 0.0 and metric.p_value == 1.0, metric
        assert metric.mean_a == metric.mean_b
        assert metric.verdict == "no detectable difference"


def test_direction_decides_better_or_worse_and_holm_adjusts(store: SQLiteStore) -> None:
    ds, examples = dataset(store, 100)
    a = RNG.uniform(0.2, 0.4, 100)
    lower = {"direction": "lower", "score_range": (0, None)}
    experiment(
        store, ds, examples, "a", {"distance": _column(a), "sim": _column(a)}, info={"distance": lower}
    )
    experiment(
        store,
        ds,
        examples,
        "b",
        {"distance": _column(a + 0.1), "sim": _column(a + 0.1)},
        info={"distance": lower},
    )
    comparison = assay.compare("a", "b", client=store)
    assert comparison["distance"].direction == "lower" and comparison["distance"].verdict == "worse"
    assert comparison["sim"].direction == "higher" and comparison["sim"].verdict == "better"
    assert [m.key for m in comparison.worse] == ["distance"]
    for metric in comparison.metrics:
        assert metric.p_holm is not None and metric.p_value is not None
        assert metric.p_holm >= metric.p_value


def test_outcomes_rows_on_one_side_and_errors_are_counted_not_paired(store: SQLiteStore) -> None:
    ds, examples = dataset(store, 10)
    a: list[list[object]] = [[1.0]] * 10
    b: list[list[object]] = [[1.0]] * 6 + [["skip"], ["skip"], ["error"], [0.0]]
    experiment(store, ds, examples, "a", {"m": a})
    experiment(store, ds, examples, "b", {"m": b})
    comparison = assay.compare("a", "b", client=store)
    metric = comparison["m"]
    assert (metric.n_paired, metric.only_a, metric.only_b) == (7, 3, 0)
    assert (metric.skipped_b, metric.errors_b, comparison.b.target_failures) == (2, 1, 2)
    assert any("one side only" in w for w in comparison.warnings)


def test_different_datasets_name_both(store: SQLiteStore) -> None:
    ds1, ex1 = dataset(store, 5)
    ds2, ex2 = dataset(store, 5)
    experiment(store, ds1, ex1, "on-first", {"m": [[1.0]] * 5})
    experiment(store, ds2, ex2, "on-second", {"m": [[1.0]] * 5})
    with pytest.raises(assay.NotComparableError, match=r"'on-first' on dataset .*'on-second' on dataset"):
        assay.compare("on-first", "on-second", client=store)


def test_different_metrics_compare_the_overlap_and_say_what_differs(store: SQLiteStore) -> None:
    ds, examples = dataset(store, 5)
    experiment(store, ds, examples, "a", {"m": [[1.0]] * 5, "old": [[0.5]] * 5})
    experiment(store, ds, examples, "b", {"m": [[1.0]] * 5, "new": [[0.5]] * 5})
    comparison = assay.compare("a", "b", client=store)
    assert [m.key for m in comparison.metrics] == ["m"]
    assert comparison.metrics_only_a == ["old"] and comparison.metrics_only_b == ["new"]
    assert "metrics only in 'a' (not compared): old" in comparison.warnings
    assert "metrics only in 'b' (not compared): new" in comparison.warnings
    experiment(store, ds, examples, "c", {"other": [[1.0]] * 5})
    with pytest.raises(assay.NotComparableError, match="share no metric"):
        assay.compare("a", "c", client=store)


def test_a_running_experiment_is_compared_on_its_finished_rows_and_flagged(store: SQLiteStore) -> None:
    ds, examples = dataset(store, 8)
    experiment(store, ds, examples, "done", {"m": [[1.0]] * 8})
    experiment(store, ds, examples[:3], "half", {"m": [[1.0]] * 3}, status="running")
    comparison = assay.compare("done", "half", client=store)
    assert comparison.b.status == "running"
    assert "'half' is still running: compared on its 3 finished rows" in comparison.warnings
    assert (comparison["m"].n_paired, comparison["m"].only_a) == (3, 5)


def test_results_objects_compare_through_their_own_store(tmp_path: Path) -> None:
    client = assay.Client(str(tmp_path / "x.db"))
    data = [{"inputs": {"i": i}, "outputs": {"o": i}} for i in range(20)]
    client.create_dataset("d")
    client.create_examples(dataset_name="d", examples=data)

    def exact(outputs: dict, reference_outputs: dict) -> bool:
        return outputs["o"] == reference_outputs["o"]

    first = client.evaluate(lambda inputs: {"o": inputs["i"]}, data="d", evaluators=[exact])
    second = client.evaluate(
        lambda inputs: {"o": inputs["i"] if inputs["i"] % 2 else -1}, data="d", evaluators=[exact]
    )
    comparison = first.compare(second)
    assert comparison["exact"].verdict == "worse" and comparison["exact"].difference == -0.5
    assert (
        assay.compare(first.experiment_name, second.experiment_name, client=client).as_dict()
        == comparison.as_dict()
    )
    client.close()


def test_results_without_their_store_are_compared_through_their_url(tmp_path: Path) -> None:
    from assay.evaluation._results import ExperimentResults

    path = tmp_path / "by-url.db"
    store = SQLiteStore(path)
    ds, examples = dataset(store, 20)
    a = experiment(store, ds, examples, "a", {"m": [[1.0]] * 20})
    b = experiment(store, ds, examples, "b", {"m": [[1.0]] * 10 + [[0.0]] * 10})
    url = store.url
    store.close()
    first, second = (ExperimentResults(record, [], [], url) for record in (a, b))
    comparison = assay.compare(first, second)  # opens the store at the URL, and closes it
    assert comparison["m"].difference == -0.5 and comparison["m"].verdict == "worse"  # p = 0.002


def test_no_spread_gives_no_minimum_detectable_effect() -> None:
    """Two runs that agree on every pair cannot say what change they would detect: no MDE
    (not 0.0, which reads "detects any change")."""
    from assay.stats.paired import BinaryPairs, Differences, mcnemar, paired_t

    assert mcnemar(BinaryPairs(2, 0, 0, 0)).mde is None
    assert mcnemar(BinaryPairs(30, 0, 0, 10)).mde is None
    assert paired_t(Differences(5, 2.5, 1.25, None)).mde is None  # every difference 0.5
    assert mcnemar(BinaryPairs(30, 3, 4, 10)).mde is not None
