"""The UI's read-only SQL, against a real SQLite store filled through the store API."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from ui_testdata import (
    BASELINE_FAILED,
    ERROR,
    IMPROVEMENTS,
    REGRESSIONS,
    N,
    RowSpec,
    Scenario,
    make_dataset,
    make_experiment,
)

from assay.schemas import Example
from assay.store import Store
from assay.store.read.database import ReadOnlyDatabase
from assay.ui import queries
from assay.ui.errors import BadRequest, NotFound
from assay.ui.models import ExperimentSummary, RowFilter


def summary(db: ReadOnlyDatabase, name: str) -> ExperimentSummary:
    found = queries.find_experiment(db, name)
    assert found is not None
    return found


def positions(
    db: ReadOnlyDatabase, name: str, per_page: int = 100, page: int = 1, **filters: Any
) -> list[int]:
    result = queries.row_page(db, summary(db, name), RowFilter(**filters), page=page, per_page=per_page)
    return [row.position for row in result.rows]


@pytest.fixture
def db(scenario: Scenario) -> ReadOnlyDatabase:
    return ReadOnlyDatabase(scenario.store)


def test_experiment_list_counts_rows_errors_and_means(db: ReadOnlyDatabase) -> None:
    listing = queries.list_experiments(db)
    assert [e.name for e in listing.experiments] == ["candidate", "baseline"]  # newest first
    baseline = listing.experiments[1]
    assert (baseline.rows, baseline.run_errors, baseline.dataset_name) == (N, 1, "qa")
    assert list(baseline.metric_means) == ["correct", "quality", "judge"]
    assert baseline.metric_means["correct"] == pytest.approx(6 / 12)
    assert baseline.metric_means["judge"] == 1.0  # the errored result is not a zero


def test_experiment_list_searches_names_and_pages(db: ReadOnlyDatabase) -> None:
    assert [e.name for e in queries.list_experiments(db, q="cand").experiments] == ["candidate"]
    assert queries.list_experiments(db, q="%").experiments == []  # LIKE wildcards are literal
    second = queries.list_experiments(db, page=2, per_page=1)
    assert second.total == 2 and [e.name for e in second.experiments] == ["baseline"]


def test_experiments_are_found_by_id_or_name(db: ReadOnlyDatabase, scenario: Scenario) -> None:
    by_id = queries.find_experiment(db, str(scenario.baseline.id))
    assert by_id is not None and by_id.name == "baseline"
    assert queries.find_experiment(db, "nope") is None


def test_metric_stats_match_the_experiment_results_aggregate(
    db: ReadOnlyDatabase, scenario: Scenario
) -> None:
    from assay.evaluation._results import ExperimentResults

    record = scenario.store.get_experiment(name="baseline")
    assert record is not None
    expected = ExperimentResults(record, scenario.store.load_rows(record), [], "").aggregate
    stats = {m.key: m for m in queries.metric_stats(db, str(record.id))}
    assert list(stats) == ["correct", "quality", "judge"]
    for key, agg in expected.items():
        got = stats[key]
        assert (got.n, got.errors) == (agg.n, agg.errors)
        assert got.mean == pytest.approx(agg.mean)
        if agg.ci_low is None:
            assert got.ci_low is None
        else:
            assert (got.ci_low, got.ci_high) == (pytest.approx(agg.ci_low), pytest.approx(agg.ci_high))
    assert stats["judge"].errors == 1 and stats["judge"].n == N - 1


def test_metric_stats_cluster_repetitions_by_example(store: Store) -> None:
    from assay.evaluation._results import ExperimentResults

    dataset, examples = make_dataset(store, "reps", [{"inputs": {"i": i}} for i in range(4)])
    scores = [1, 0, 1, 1, 0, 0, 1, 1]  # two repetitions of four examples
    rows = [RowSpec(outputs={"o": i}, scores={"s": s}, repetition=i // 4) for i, s in enumerate(scores)]
    record = make_experiment(store, "reps", dataset, examples, rows)
    expected = ExperimentResults(record, store.load_rows(record), [], "").aggregate["s"]
    (got,) = queries.metric_stats(ReadOnlyDatabase(store), str(record.id))
    assert got.ci_low == pytest.approx(expected.ci_low) and got.ci_high == pytest.approx(expected.ci_high)
    assert got.stderr == pytest.approx(expected.stderr)


def test_histograms_count_scores_and_keep_errors_apart(db: ReadOnlyDatabase) -> None:
    detail = queries.experiment_detail(db, summary(db, "baseline"))
    by_key = {h.key: h for h in detail.histograms}
    correct = by_key["correct"]
    assert (correct.bins[0].count, correct.bins[-1].count, correct.errors) == (6, 6, 0)
    quality = by_key["quality"]
    assert quality.bins[5].count == 6 and quality.bins[5].low == pytest.approx(0.5)
    judge = by_key["judge"]
    assert sum(b.count for b in judge.bins) == N - 1 and judge.errors == 1
    assert [r.key for r in detail.summary_results] == ["pass_rate", "f1"]
    assert detail.summary_results[1].error == "ZeroDivisionError: no positives"
    assert detail.latency.max_ms == pytest.approx(10.0 + N - 1)


def test_histogram_of_a_metric_outside_zero_one_spans_its_range(store: Store) -> None:
    dataset, examples = make_dataset(store, "wide", [{"inputs": {"i": i}} for i in range(5)])
    rows = [RowSpec(outputs={}, scores={"tokens": t}) for t in (10, 20, 30, 40, 110)]
    record = make_experiment(store, "wide", dataset, examples, rows)
    db = ReadOnlyDatabase(store)
    (metric,), (hist,) = queries.metrics_and_histograms(db, str(record.id))
    assert not metric.unit_range and (metric.min, metric.max) == (10, 110)
    assert [b.count for b in hist.bins] == [1, 1, 1, 1, 0, 0, 0, 0, 0, 1]
    assert hist.bins[-1].high == pytest.approx(110)


def test_failed_filter_keeps_target_errors_evaluator_errors_and_low_scores(db: ReadOnlyDatabase) -> None:
    assert positions(db, "baseline", failed=True) == BASELINE_FAILED


def test_metric_below_filter_compares_scores_only(db: ReadOnlyDatabase) -> None:
    assert positions(db, "baseline", metric="quality", below=0.6) == [1, 3, 5, 7, 9, 11]
    assert positions(db, "baseline", metric="judge", below=2) == [i for i in range(N) if i != 4]
    assert positions(db, "baseline", failed=True, metric="correct", below=1) == [1, 3, 5, 7, 9, 11]


def test_sorting_by_metric_puts_errors_last_both_ways(db: ReadOnlyDatabase) -> None:
    ascending = positions(db, "candidate", sort="metric:judge")
    assert ascending[-1] == 7  # the rest in data order, then the errored result
    assert ascending[:-1] == [i for i in range(N) if i != 7]
    assert positions(db, "candidate", sort="metric:judge", order="desc")[-1] == 7
    descending = positions(db, "baseline", sort="metric:correct", order="desc")
    assert descending == [0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11]


def test_sorting_by_latency_and_error(db: ReadOnlyDatabase) -> None:
    assert positions(db, "baseline", sort="latency", order="desc") == list(reversed(range(N)))
    assert positions(db, "baseline", sort="error", order="desc")[0] == 9


def test_pages_come_from_sql(db: ReadOnlyDatabase) -> None:
    exp = summary(db, "baseline")
    page = queries.row_page(db, exp, RowFilter(failed=True), page=2, per_page=3)
    assert page.total == len(BASELINE_FAILED)
    assert [r.position for r in page.rows] == BASELINE_FAILED[3:6]
    assert queries.row_page(db, exp, RowFilter(), page=9, per_page=5).rows == []


def test_row_cells_show_previews_scores_errors_and_reference(db: ReadOnlyDatabase) -> None:
    rows = queries.row_page(db, summary(db, "baseline"), RowFilter(), page=1, per_page=N).rows
    four, nine = rows[4], rows[9]
    assert (four.inputs, four.outputs, four.reference) == ("question 4", "answer 4", "answer 4")
    judge = next(c for c in four.scores if c.key == "judge")
    assert judge.score is None and judge.error == "ValueError: judge broke"
    assert nine.error == "RuntimeError: model timed out" and nine.outputs == ""


def test_search_matches_inputs_and_outputs_literally(db: ReadOnlyDatabase) -> None:
    assert positions(db, "baseline", q="wrong 1") == [1, 11]
    assert positions(db, "baseline", q="question 1") == [1, 10, 11]
    assert positions(db, "baseline", q="_") == []


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"sort": "bogus"}, "unknown sort 'bogus'; accepted: position, latency, error, metric:<key>"),
        (
            {"sort": "metric:nope"},
            "unknown metric 'nope'; this experiment's metrics: correct, quality, judge",
        ),
        ({"below": 0.5}, "the 'below' filter needs a 'metric'"),
    ],
)
def test_bad_filters_are_named(db: ReadOnlyDatabase, filters: dict[str, Any], message: str) -> None:
    with pytest.raises(BadRequest, match=message.replace("(", r"\(").replace("[", r"\[")):
        queries.row_page(db, summary(db, "baseline"), RowFilter(**filters), page=1, per_page=10)


def test_row_detail_has_everything_and_the_trace_tree(db: ReadOnlyDatabase) -> None:
    exp = summary(db, "baseline")
    first = queries.row_page(db, exp, RowFilter(), page=1, per_page=2).rows
    detail = queries.row_detail(db, exp, first[0].run_id)
    assert detail.inputs == {"question": "question 0"}
    assert detail.reference_outputs == {"answer": "answer 0"}
    assert detail.example_metadata == {"topic": "math"}
    assert detail.previous_run_id is None and detail.next_run_id == first[1].run_id
    retrieve, generate = detail.run.children
    assert (retrieve.name, retrieve.offset_ms, retrieve.duration_ms) == ("retrieve", 0.0, 4.0)
    assert (generate.offset_ms, generate.duration_ms) == (4.0, 6.0)
    (tokenize,) = retrieve.children
    assert (tokenize.name, tokenize.offset_ms, tokenize.duration_ms) == ("tokenize", 1.0, 1.0)
    assert detail.run.duration_ms == pytest.approx(10.0)
    with pytest.raises(NotFound, match="experiment 'baseline' has no row with run id 'x'"):
        queries.row_detail(db, exp, "x")


def test_row_detail_keeps_metadata_and_tracebacks(db: ReadOnlyDatabase) -> None:
    exp = summary(db, "baseline")
    rows = queries.row_page(db, exp, RowFilter(), page=1, per_page=N).rows
    one = queries.row_detail(db, exp, rows[1].run_id)
    correct = next(r for r in one.results if r.key == "correct")
    assert correct.metadata["test_cases_details"][1]["actual_output"] == 5
    four = queries.row_detail(db, exp, rows[4].run_id)
    judge = next(r for r in four.results if r.key == "judge")
    assert judge.error and judge.score is None and "Traceback" in judge.metadata["traceback"]


def test_reference_comes_from_the_dataset_version_the_experiment_ran_on(store: Store) -> None:
    dataset, examples = make_dataset(store, "versioned", [{"inputs": {"q": 1}, "outputs": {"a": "old"}}])
    make_experiment(store, "before-edit", dataset, examples, [RowSpec(outputs={"a": "x"}, scores={"s": 1})])
    store.update_example(
        Example(id=examples[0].id, dataset_id=dataset.id, inputs={"q": 1}, outputs={"a": "new"})
    )
    db = ReadOnlyDatabase(store)
    (row,) = queries.row_page(db, summary(db, "before-edit"), RowFilter(), page=1, per_page=5).rows
    assert row.reference == "old"
    current = queries.find_dataset(db, "versioned")
    assert current is not None and current.version == 2
    assert [
        e.outputs
        for e in queries.example_page(db, current, version=None, q=None, page=1, per_page=5).examples
    ] == [{"a": "new"}]
    old = queries.example_page(db, current, version=1, q=None, page=1, per_page=5)
    assert [e.outputs for e in old.examples] == [{"a": "old"}]
    assert [(v.version, v.added, v.removed) for v in old.versions] == [(2, 1, 1), (1, 1, 0)]


def test_examples_are_searchable_and_paginated(db: ReadOnlyDatabase) -> None:
    dataset = queries.find_dataset(db, "qa")
    assert dataset is not None and (dataset.example_count, dataset.experiment_count) == (N, 2)
    found = queries.example_page(db, dataset, version=None, q="answer 1", page=1, per_page=50)
    assert [e.position for e in found.examples] == [1, 10, 11]
    second = queries.example_page(db, dataset, version=None, q=None, page=2, per_page=5)
    assert second.total == N and [e.position for e in second.examples] == [5, 6, 7, 8, 9]
    assert [e.name for e in second.experiments] == ["candidate", "baseline"]


def test_compare_classifies_rows_against_the_baseline(db: ReadOnlyDatabase) -> None:
    exps = [summary(db, "baseline"), summary(db, "candidate")]

    def shown(show: str, metric: str | None = None) -> list[int]:
        page = queries.compare_page(db, exps, show=show, metric=metric, page=1, per_page=50)  # type: ignore[arg-type]
        return [row.position for row in page.rows]

    assert shown("regressions") == REGRESSIONS
    assert shown("improvements") == IMPROVEMENTS
    assert shown("changed") == sorted(REGRESSIONS + IMPROVEMENTS)
    assert shown("all") == list(range(N))
    assert shown("regressions", "correct") == [0]
    assert shown("improvements", "correct") == [1, 3]
    assert shown("regressions", "judge") == [7] and shown("improvements", "judge") == [4]


def test_compare_metrics_and_cells(db: ReadOnlyDatabase) -> None:
    base, cand = summary(db, "baseline"), summary(db, "candidate")
    page = queries.compare_page(db, [base, cand], show="all", metric=None, page=1, per_page=50)
    correct = next(m for m in page.metrics if m.key == "correct")
    assert correct.means[base.id] == pytest.approx(0.5)
    assert correct.deltas[cand.id] == pytest.approx(1 / 12)
    assert (correct.regressions[cand.id], correct.improvements[cand.id]) == (1, 2)
    judge = next(m for m in page.metrics if m.key == "judge")
    assert (judge.errors[base.id], judge.errors[cand.id]) == (1, 1)
    row0 = page.rows[0]
    assert row0.change == "regressed" and row0.cells[1].changes == {
        "correct": "regressed",
        "quality": "same",
        "judge": "same",
    }
    assert (
        page.rows[10].cells[1].error == "RuntimeError: rate limited" and page.rows[10].change == "regressed"
    )
    assert page.rows[4].cells[1].changes["judge"] == "improved"


def test_compare_pages_and_counts_past_the_end(db: ReadOnlyDatabase) -> None:
    exps = [summary(db, "baseline"), summary(db, "candidate")]
    second = queries.compare_page(db, exps, show="changed", metric=None, page=2, per_page=3)
    assert second.total == 8 and [r.position for r in second.rows] == sorted(REGRESSIONS + IMPROVEMENTS)[3:6]
    beyond = queries.compare_page(db, exps, show="changed", metric=None, page=9, per_page=3)
    assert beyond.total == 8 and beyond.rows == []


def test_compare_refuses_experiments_on_different_datasets(store: Store, scenario: Scenario) -> None:
    dataset, examples = make_dataset(store, "other", [{"inputs": {"q": 1}}])
    make_experiment(store, "elsewhere", dataset, examples, [RowSpec(outputs={}, scores={"s": ERROR})])
    db = ReadOnlyDatabase(store)
    with pytest.raises(BadRequest, match="must share one stored dataset.*'elsewhere' on dataset 'other'"):
        queries.compare_page(
            db,
            [summary(db, "baseline"), summary(db, "elsewhere")],
            show="all",
            metric=None,
            page=1,
            per_page=5,
        )
    with pytest.raises(BadRequest, match="at least two"):
        queries.compare_page(db, [summary(db, "baseline")], show="all", metric=None, page=1, per_page=5)
    with pytest.raises(BadRequest, match="unknown metric 'zzz'"):
        queries.compare_page(
            db,
            [summary(db, "baseline"), summary(db, "candidate")],
            show="all",
            metric="zzz",
            page=1,
            per_page=5,
        )


def test_file_stores_are_read_through_read_only_connections(db: ReadOnlyDatabase, scenario: Scenario) -> None:
    assert db.is_file
    with pytest.raises(sqlite3.OperationalError, match="readonly|read-only"):
        db.conn.execute("DELETE FROM runs")
    assert scenario.store.completed_keys(scenario.baseline.id)  # the store itself still writes
    db.close()


def test_in_memory_stores_are_read_through_the_store(scenario: Scenario) -> None:
    from assay.store import open_store

    memory = open_store("sqlite://")
    try:
        dataset, examples = make_dataset(memory, "m", [{"inputs": {"q": 1}}])
        make_experiment(memory, "mem", dataset, examples, [RowSpec(outputs={"a": 1}, scores={"s": 1})])
        db = ReadOnlyDatabase(memory)
        assert not db.is_file
        assert [e.name for e in queries.list_experiments(db).experiments] == ["mem"]
    finally:
        memory.close()


def _aggregate_of(store: Store, name: str) -> dict[str, Any]:
    from assay.evaluation._results import ExperimentResults

    record = store.get_experiment(name=name)
    assert record is not None
    return ExperimentResults(record, store.load_rows(record), [], "").aggregate


def test_a_key_written_twice_in_one_row_is_one_cluster(store: Store) -> None:
    from ui_testdata import make_run

    from assay.evaluation import EvaluationResult
    from assay.store.records import ExperimentRecord, ExperimentRow

    dataset, examples = make_dataset(store, "dupes", [{"inputs": {"i": i}} for i in range(5)])
    record = ExperimentRecord(name="dupes", dataset_id=dataset.id, dataset_version=dataset.version)
    store.create_experiment(record)
    scores = [[1.0, 0.0], [1.0], [0.5, 0.5, 1.0], [0.0], [1.0]]
    rows = [
        ExperimentRow(
            run=make_run(examples[i], RowSpec(outputs={})),
            example=examples[i],
            repetition=0,
            position=i,
            results=[EvaluationResult(key="s", score=s) for s in row],
        )
        for i, row in enumerate(scores)
    ]
    # An errored result that still carries a score: the report ignores the score, so must we.
    rows[3].results.append(EvaluationResult(key="s", score=1.0, error="late failure"))
    store.write_rows(record.id, rows)
    expected = _aggregate_of(store, "dupes")["s"]
    (got,) = queries.metric_stats(ReadOnlyDatabase(store), str(record.id))
    assert (got.n, got.errors) == (expected.n, expected.errors) == (8, 1)
    assert got.mean == pytest.approx(expected.mean)
    assert (got.ci_low, got.ci_high) == (pytest.approx(expected.ci_low), pytest.approx(expected.ci_high))


def test_a_constant_metric_has_one_bin_and_no_interval_width(store: Store) -> None:
    dataset, examples = make_dataset(store, "flat", [{"inputs": {"i": i}} for i in range(3)])
    rows = [RowSpec(outputs={}, scores={"tokens": 42}) for _ in range(3)]
    record = make_experiment(store, "flat", dataset, examples, rows)
    (metric,), (hist,) = queries.metrics_and_histograms(ReadOnlyDatabase(store), str(record.id))
    assert [(b.low, b.high, b.count) for b in hist.bins] == [(42, 42, 3)]
    assert (metric.mean, metric.ci_low, metric.ci_high) == (42, 42, 42)


def test_a_metric_with_only_errors_or_values_has_no_mean(store: Store) -> None:
    dataset, examples = make_dataset(store, "valued", [{"inputs": {"i": i}} for i in range(2)])
    rows = [RowSpec(outputs={}, scores={"judge": ERROR}) for _ in range(2)]
    record = make_experiment(store, "valued", dataset, examples, rows)
    (metric,), (hist,) = queries.metrics_and_histograms(ReadOnlyDatabase(store), str(record.id))
    assert (metric.mean, metric.n, metric.errors, metric.ci_low) == (None, 0, 2, None)
    assert hist.bins == [] and hist.errors == 2


def test_compare_three_experiments_judges_each_against_the_baseline(store: Store, scenario: Scenario) -> None:
    from ui_testdata import baseline_row

    make_experiment(store, "copy", scenario.dataset, scenario.examples, [baseline_row(i) for i in range(N)])
    db = ReadOnlyDatabase(store)
    exps = [summary(db, "baseline"), summary(db, "copy"), summary(db, "candidate")]
    page = queries.compare_page(db, exps, show="regressions", metric=None, page=1, per_page=50)
    assert [row.position for row in page.rows] == REGRESSIONS
    copy_id, candidate_id = exps[1].id, exps[2].id
    correct = next(m for m in page.metrics if m.key == "correct")
    assert correct.deltas[copy_id] == 0 and correct.regressions[copy_id] == 0
    assert correct.regressions[candidate_id] == 1
    first = page.rows[0]
    assert [cell.experiment_id for cell in first.cells] == [exps[0].id, copy_id, candidate_id]
    assert first.cells[1].changes["correct"] == "same" and first.cells[2].changes["correct"] == "regressed"
