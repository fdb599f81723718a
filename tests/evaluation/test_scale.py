"""Rows that stay in the store: stored figures, lazy results, paged summary arguments."""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from assay import Client
from assay.evaluation._tally import tally_of_stored
from assay.store.read.database import ReadOnlyDatabase
from assay.ui.queries import experiment_detail, find_experiment


def target(inputs: dict) -> dict:
    if inputs["x"] % 11 == 5:
        raise RuntimeError("target down")
    return {"y": 2 * inputs["x"] if inputs["x"] % 3 else -1}


def correct(outputs: dict, reference_outputs: dict) -> bool:
    return outputs["y"] == reference_outputs["y"]


def spread(inputs: dict) -> float:
    if inputs["x"] % 13 == 0:
        raise ValueError("no spread for this one")
    return (inputs["x"] % 7) * 1.5


def labelled(inputs: dict) -> dict:
    return {
        "key": "label",
        "value": "odd" if inputs["x"] % 2 else "even",
        "metadata": {"usage": {"total_tokens": 3}},
    }


DATA = [{"inputs": {"x": i}, "outputs": {"y": 2 * i}} for i in range(240)]


def run(client: Client, name: str = "scale", **kwargs) -> object:
    return client.evaluate(
        target,
        data=DATA,
        evaluators=[correct, spread, labelled],
        experiment=name,
        num_repetitions=2,
        max_concurrency=8,
        **kwargs,
    )


def test_stored_figures_equal_a_scan_of_the_stored_rows(client: Client) -> None:
    results = run(client)
    record = client.store.get_experiment(name="scale")
    stats = client.store.load_stats(record.id)
    assert stats is not None and stats.final
    scanned = tally_of_stored(client.store.iter_scores(record.id)).stats(final=True)
    assert stats.rows == scanned.rows == 480
    assert stats.run_errors == scanned.run_errors == 2 * sum(1 for i in range(240) if i % 11 == 5)
    assert stats.usage == {"total_tokens": 3 * 480}
    assert [m.key for m in stats.metrics] == ["correct", "spread", "label"]
    for stored, fresh in zip(stats.metrics, scanned.metrics):
        assert (stored.n, stored.errors, stored.unscored, stored.skipped) == (
            fresh.n,
            fresh.errors,
            fresh.unscored,
            fresh.skipped,
        )
        assert (stored.direction, stored.ci_method, stored.binary) == (
            fresh.direction,
            fresh.ci_method,
            fresh.binary,
        )
        assert stored.histogram == fresh.histogram
        for name in ("mean", "stderr", "ci_low", "ci_high", "min", "max"):
            assert getattr(stored, name) == pytest.approx(getattr(fresh, name))
    spread_stats = stats.metrics[1]
    assert spread_stats.errors == 2 * sum(1 for i in range(240) if i % 13 == 0)
    assert sum(spread_stats.histogram) == spread_stats.n
    # a value-only metric: unscored where the target succeeded, skipped where it failed
    label = stats.metrics[2]
    assert (label.unscored, label.skipped, label.n) == (480 - stats.run_errors, stats.run_errors, 0)
    assert results.target_errors == stats.run_errors
    assert results.usage() == {"total_tokens": 3 * 480}


def test_read_experiment_and_the_ui_read_figures_not_rows(client: Client, tmp_path: Path) -> None:
    run(client)
    with sqlite3.connect(tmp_path / "assay.db") as conn:  # make a scan visible: drop the rows
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("DELETE FROM results")
    again = client.read_experiment("scale")
    assert again.aggregate["correct"].n > 0  # from the stored figures, not the emptied table
    db = ReadOnlyDatabase(client.store)
    detail = experiment_detail(db, find_experiment(db, "scale"))
    assert detail.experiment.rows == 480
    assert [m.key for m in detail.metrics] == ["correct", "spread", "label"]
    assert detail.metrics[0].n == again.aggregate["correct"].n
    assert detail.latency.mean_ms is not None


def test_results_read_lazily_in_data_order_with_indexing(client: Client) -> None:
    results = run(client)
    read = client.read_experiment("scale")
    for view in (results, read):
        assert len(view) == 480
        keys = [(row["example"].inputs["x"], row["run"].extra["repetition"]) for row in view]
        assert keys == [(i, r) for i in range(240) for r in range(2)]
        assert view[0]["example"].inputs == {"x": 0}
        assert view[-1]["example"].inputs == {"x": 239}
        assert [row["example"].inputs["x"] for row in view[10:14]] == [5, 5, 6, 6]
        with pytest.raises(IndexError):
            view[480]
    assert results.aggregate.keys() == read.aggregate.keys()
    for key, agg in results.aggregate.items():
        assert agg.mean == pytest.approx(read.aggregate[key].mean)
    frame = read.to_pandas()
    assert len(frame) == 480 and list(frame["example_id"][:2]) == [frame["example_id"][0]] * 2


def test_summary_evaluators_get_list_like_sequences_read_from_the_store(client: Client) -> None:
    seen: dict[str, object] = {}

    def summary(
        runs: Sequence,
        examples: Sequence,
        inputs: Sequence,
        outputs: Sequence,
        reference_outputs: Sequence,
        evaluation_results: Sequence,
    ) -> dict:
        seen["lengths"] = {
            len(runs),
            len(examples),
            len(inputs),
            len(outputs),
            len(reference_outputs),
            len(evaluation_results),
        }
        seen["inputs"] = [i["x"] for i in inputs]
        seen["runs"] = [run.outputs for run in runs][:4]
        seen["indexing"] = (outputs[3], reference_outputs[-1], examples[2].inputs)
        seen["list"] = list(outputs) == outputs
        seen["results"] = [r.key for r in evaluation_results[0]]
        hits = sum(o.get("y") == r["y"] for o, r in zip(outputs, reference_outputs))
        return {"key": "accuracy", "score": hits / len(outputs)}

    results = client.evaluate(
        target,
        data=DATA,
        evaluators=[correct, spread, labelled],
        summary_evaluators=[summary],
        num_repetitions=2,
        max_concurrency=8,
    )
    assert seen["lengths"] == {480}
    assert seen["inputs"] == [i for i in range(240) for _ in range(2)]
    assert seen["runs"] == [{"y": -1}, {"y": -1}, {"y": 2}, {"y": 2}]
    assert seen["indexing"] == ({"y": 2}, {"y": 478}, {"x": 1})
    assert seen["list"] is True
    assert seen["results"] == ["correct", "spread", "label"]
    expected = sum(1 for i in range(240) if i % 3 and i % 11 != 5) * 2 / 480
    assert results.summary_results.results[0].score == pytest.approx(expected)


def test_figures_are_kept_current_while_the_experiment_runs(client: Client, tmp_path: Path) -> None:
    release = threading.Event()

    def slow(inputs: dict) -> dict:
        if inputs["x"] >= 100:
            release.wait(10)
        return {"y": 2 * inputs["x"]}

    worker = threading.Thread(
        target=lambda: client.evaluate(
            slow,
            data=DATA,
            evaluators=[correct],
            experiment="live",
            max_concurrency=4,
        )
    )
    worker.start()
    try:
        deadline = time.monotonic() + 20
        figures = None
        while time.monotonic() < deadline:
            with sqlite3.connect(tmp_path / "assay.db") as conn:
                try:
                    figures = conn.execute(
                        "SELECT s.row_count, s.final, m.n FROM experiment_stats s "
                        "JOIN metric_stats m ON m.experiment_id = s.experiment_id"
                    ).fetchone()
                except sqlite3.OperationalError:
                    figures = None
            if figures and figures[0] >= 100:
                break
            time.sleep(0.05)
        assert figures is not None and figures[0] >= 100 and figures[1] == 0
        assert 0 < figures[2] <= figures[0]
    finally:
        release.set()
        worker.join()
    final = client.read_experiment("live")
    assert final.stats.final and final.aggregate["correct"].n == 240


def test_resume_rebuilds_the_figures_from_the_stored_rows(client: Client) -> None:
    first = client.evaluate(target, data=DATA[:100], evaluators=[correct], experiment="resumed")
    assert len(first) == 100
    resumed = client.evaluate(
        target, data=DATA[:100], evaluators=[correct], experiment="resumed", resume=True
    )
    # the target's failures ran again (and failed again); the figures count every row once
    assert len(resumed) == 100
    assert resumed.stats.rows == 100 and resumed.target_errors == first.target_errors
    assert resumed.aggregate["correct"].n == first.aggregate["correct"].n
    assert math.isclose(resumed.aggregate["correct"].mean, first.aggregate["correct"].mean)


def test_examples_stream_in_and_out_of_the_store_with_duplicates_named(client: Client) -> None:
    from assay.schemas import Example
    from assay.store import AlreadyExistsError

    dataset = client.create_dataset("streamed")
    made = (Example(inputs={"x": i}, outputs={"y": 2 * i}) for i in range(5000))  # a generator
    client.store.add_examples(dataset.id, made)
    assert client.store.count_examples(dataset.id) == 5000
    read = client.store.iter_examples(dataset.id, page_size=700)
    assert [e.inputs["x"] for e in read] == list(range(5000))

    items = [Example(inputs={"x": i}) for i in range(4500)]
    items[4321] = Example(id=items[0].id, inputs={"x": -2})  # in a later chunk than the first
    with pytest.raises(AlreadyExistsError, match=r"appears twice \(the second at position 4321\)"):
        client.store.add_examples(dataset.id, iter(items))
    first = next(iter(client.store.iter_examples(dataset.id)))
    with pytest.raises(AlreadyExistsError, match="already has an example"):
        client.store.add_examples(dataset.id, [Example(id=first.id, inputs={})])
    assert client.store.count_examples(dataset.id) == 5000  # nothing of a refused call stays


def test_a_store_from_before_stored_figures_is_migrated_and_read(tmp_path: Path) -> None:
    from assay.store._schema import MIGRATIONS
    from assay.store.sqlite import _statements
    from assay.ui.models import RowFilter
    from assay.ui.queries import row_page

    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:  # schema version 1, rows written as the old writer did
        for statement in _statements(MIGRATIONS[0]):
            conn.execute(statement)
        conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
        conn.execute(
            "INSERT INTO experiments (id, name, status, created_at) "
            "VALUES ('00000000-0000-0000-0000-0000000000ee', 'old', 'completed', "
            "'2025-01-01T00:00:00+00:00')"
        )
        for i in range(4):
            conn.execute(
                "INSERT INTO runs (id, experiment_id, example_id, repetition, position, inputs, "
                "outputs, error, start_time, latency_ms) VALUES (?, '00000000-0000-0000-0000-0000000000ee', ?, 0, ?, '{}', '{}', ?, "
                "'2025-01-01T00:00:00+00:00', 5.0)",
                (
                    f"00000000-0000-0000-0000-0000000000a{i}",
                    f"00000000-0000-0000-0000-00000000000{i}",
                    i,
                    "boom" if i == 3 else None,
                ),
            )
            conn.execute(
                "INSERT INTO results (experiment_id, run_id, key, score) VALUES ('00000000-0000-0000-0000-0000000000ee', ?, 'ok', ?)",
                (f"00000000-0000-0000-0000-0000000000a{i}", 1.0 if i % 2 == 0 else 0.0),
            )
    client = Client(str(path))
    old = client.read_experiment("old")
    assert len(old) == 4 and old.target_errors == 1
    assert old.aggregate["ok"].n == 4 and old.aggregate["ok"].mean == 0.5  # a scan: no figures stored
    db = ReadOnlyDatabase(client.store)
    summary = find_experiment(db, "old")
    assert summary.rows == 4 and summary.run_errors == 1
    failed = row_page(db, summary, RowFilter(failed=True), page=1, per_page=10)
    assert [row.position for row in failed.rows] == [1, 3] and failed.total == 2  # backfilled
    assert [m.key for m in experiment_detail(db, summary).metrics] == ["ok"]
    client.close()


def test_stored_aggregates_keep_the_outcome_model_and_the_direction(client: Client) -> None:
    """What read_experiment reads back (stored figures) says what the run computed: the
    interval's method, skipped results of a failed target, and a lower-is-better metric."""
    from assay.evaluators import StringDistanceEvaluator

    data = [{"inputs": {"x": i}, "outputs": {"output": "abc" if i % 2 else "abd"}} for i in range(40)]

    def answer(inputs: dict) -> str:
        if inputs["x"] % 10 == 3:
            raise RuntimeError("down")
        return "abc"

    live = client.evaluate(answer, data=data, evaluators=[StringDistanceEvaluator()], experiment="dir")
    stored = client.read_experiment("dir").aggregate
    assert stored.keys() == live.aggregate.keys()
    for key, fresh in live.aggregate.items():
        again = stored[key]
        assert (again.n, again.errors, again.skipped, again.method, again.direction) == (
            fresh.n,
            fresh.errors,
            fresh.skipped,
            fresh.method,
            fresh.direction,
        )
        assert again.mean == pytest.approx(fresh.mean)
    distance = next(iter(stored.values()))
    assert distance.direction == "lower" and distance.skipped == 4 and distance.n == 36
