"""Stored columns are only ever true: built when an experiment completes, dropped by any
write of its runs or results, rebuilt on first use, migrated into stores of schema 6."""

from __future__ import annotations

import re
import sqlite3
import uuid
from pathlib import Path

import pytest
from columns_testdata import assert_same, by_sql, dataset, experiment, has_columns

import assay
from assay.schemas import EvaluationResult, Example, Run
from assay.store._schema import MIGRATIONS
from assay.store.records import ExperimentRow
from assay.store.sqlite import SQLiteStore

ROWS_A = {(i, 0): (False, {"m": float(i % 2), "s": i / 10}) for i in range(8)}
ROWS_B = {(i, 0): (False, {"m": float(i % 3 == 0), "s": i / 9}) for i in range(8)}


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    return SQLiteStore(tmp_path / "s.db")


def _pair(store: SQLiteStore) -> tuple[object, object, list[Example]]:
    ds, examples = dataset(store, 8)
    a = experiment(store, ds, examples, "a", ROWS_A)
    b = experiment(store, ds, examples, "b", ROWS_B)
    return a, b, examples


def _run_ids(store: SQLiteStore, record: object) -> list[str]:
    rows = store.conn.execute(
        "SELECT id FROM runs WHERE experiment_id = ? ORDER BY position",
        (str(record.id),),  # type: ignore[attr-defined]
    )
    return [row[0] for row in rows]


def test_a_completed_experiment_has_columns_and_a_running_one_none(store: SQLiteStore) -> None:
    ds, examples = dataset(store, 8)
    done = experiment(store, ds, examples, "a", ROWS_A)
    running = experiment(store, ds, examples, "b", ROWS_B, status="running")
    assert has_columns(store, done) and not has_columns(store, running)
    comparison = assay.compare("a", "b", client=store)  # a running side: the SQL path
    assert not has_columns(store, running)
    assert_same(comparison, by_sql(store, done, running))


def test_a_rescore_after_finish_drops_the_columns_and_compare_sees_the_new_scores(
    store: SQLiteStore,
) -> None:
    a, b, _ = _pair(store)
    before = assay.compare("a", "b", client=store)["s"]
    new = [(uuid.UUID(run_id), [EvaluationResult(key="s", score=5.0)]) for run_id in _run_ids(store, b)]
    store.write_results(b.id, new, replace=True)  # type: ignore[attr-defined]
    assert not has_columns(store, b) and has_columns(store, a)
    after = assay.compare("a", "b", client=store)
    assert has_columns(store, b)  # rebuilt on first use
    assert after["s"].mean_b == pytest.approx(5.0) != before.mean_b
    assert_same(after, by_sql(store, a, b))


def test_a_resume_drops_the_columns_until_it_completes(store: SQLiteStore) -> None:
    a, b, examples = _pair(store)
    store.reopen_experiment(b.id)  # type: ignore[attr-defined]
    assert not has_columns(store, b)
    store.discard_failed_runs(b.id)  # type: ignore[attr-defined]
    row = ExperimentRow(
        run=Run(inputs={}, outputs={"o": 1}),
        example=examples[0],
        repetition=1,
        position=0,
        results=[EvaluationResult(key="m", score=1.0)],
    )
    store.write_rows(b.id, [row])  # type: ignore[attr-defined]
    assert not has_columns(store, b)
    store.finish_experiment(b.id, "completed")  # type: ignore[attr-defined]
    assert has_columns(store, b)
    b = store.get_experiment(id=b.id)  # type: ignore[attr-defined]
    assert_same(assay.compare("a", "b", client=store), by_sql(store, a, b))


@pytest.mark.parametrize("write", ["write_rows", "discard_failed_runs", "delete_experiment"])
def test_every_write_of_runs_or_results_drops_the_columns(store: SQLiteStore, write: str) -> None:
    ds, examples = dataset(store, 8)
    rows = {**ROWS_A, (7, 0): (True, {"m": 1.0})}  # one failed target, for discard_failed_runs
    a = experiment(store, ds, examples, "a", rows)
    assert has_columns(store, a)
    if write == "write_rows":
        extra = ExperimentRow(run=Run(inputs={}, outputs={}), example=examples[1], repetition=3, position=1)
        store.write_rows(a.id, [extra])
    elif write == "discard_failed_runs":
        assert store.discard_failed_runs(a.id) == 1
    else:
        store.delete_experiment(a.id)
    left = store.conn.execute(
        "SELECT (SELECT COUNT(*) FROM metric_columns WHERE experiment_id = ?) "
        "+ (SELECT COUNT(*) FROM metric_column_sets WHERE experiment_id = ?)",
        (str(a.id), str(a.id)),
    ).fetchone()[0]
    assert left == 0


def test_evaluate_existing_and_evaluate_keep_them_true(tmp_path: Path) -> None:
    client = assay.Client(str(tmp_path / "run.db"))
    data = [{"inputs": {"x": i}, "outputs": {"y": i % 3}} for i in range(30)]

    def exact(outputs: dict, reference_outputs: dict) -> bool:
        return bool(outputs["y"] == reference_outputs["y"])

    first = client.evaluate(lambda x: {"y": x % 3}, data=data, evaluators=[exact], experiment_prefix="a")
    second = client.evaluate(lambda x: {"y": x % 2}, data=data, evaluators=[exact], experiment_prefix="b")
    store = client.store
    assert all(has_columns(store, r.experiment) for r in (first, second))  # type: ignore[arg-type]

    def fair(outputs: dict) -> float:
        return float(outputs["y"]) / 2

    assay.evaluate_existing(second.experiment_name, evaluators=[fair], client=client, progress=False)
    assert not has_columns(store, second.experiment)  # type: ignore[arg-type]
    comparison = assay.compare(first.experiment_name, second.experiment_name, client=client)
    assert comparison.metrics_only_b == ["fair"]
    records = [store.get_experiment(name=r.experiment_name) for r in (first, second)]
    assert_same(comparison, by_sql(store, *records))  # type: ignore[arg-type]
    client.close()


def _to_schema_6(path: Path) -> None:
    """Drop what every migration after the sixth created (newest first), as if never run."""
    created = [
        match.groups()
        for migration in MIGRATIONS[6:]
        for match in re.finditer(r"CREATE (?:UNIQUE )?(TABLE|INDEX) (\w+)", migration)
    ]
    with sqlite3.connect(path) as conn:
        for kind, name in reversed(created):
            conn.execute(f"DROP {kind} {name}")
        conn.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
    conn.close()


def test_a_store_of_schema_6_migrates_and_builds_columns_on_first_compare(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store = SQLiteStore(path)
    a, b, _ = _pair(store)
    expected = by_sql(store, a, b)
    store.close()
    _to_schema_6(path)
    with pytest.raises(sqlite3.OperationalError, match="no such table"):  # really the old shape
        sqlite3.connect(path).execute("SELECT 1 FROM metric_columns")
    store = SQLiteStore(path)
    try:
        assert not has_columns(store, a) and not has_columns(store, b)
        assert_same(assay.compare("a", "b", client=store), expected)
        assert has_columns(store, a) and has_columns(store, b)
    finally:
        store.close()


@pytest.mark.parametrize("rewritten", [["a", "b"], ["b"]])
def test_ids_that_are_not_uuids_are_stored_as_text_and_pair_the_same(
    store: SQLiteStore, rewritten: list[str]
) -> None:
    """Results written outside a run's pair carry other ids: kept as fixed-width text (both
    sides) or, when only one side's are text, that metric is paired by the SQL."""
    a, b, _ = _pair(store)
    with store.transaction() as conn:
        conn.execute("CREATE TEMP TABLE names AS SELECT DISTINCT example_id AS old FROM results")
        for i, (old,) in enumerate(conn.execute("SELECT old FROM names").fetchall()):
            new = f"é-{i}" if i % 2 else f"example number {i}"  # not UUIDs, of several widths
            conn.execute(
                "UPDATE results SET example_id = ? WHERE example_id = ? AND experiment_id IN "
                f"(SELECT id FROM experiments WHERE name IN ({', '.join('?' * len(rewritten))}))",
                (new, old, *rewritten),
            )
    expected = by_sql(store, a, b)  # drops the columns, now stale
    comparison = assay.compare("a", "b", client=store)
    formats = {row[0] for row in store.conn.execute("SELECT id_format FROM metric_columns")}
    assert formats == ({"text:16"} if len(rewritten) == 2 else {"uuid", "text:16"})
    assert_same(comparison, expected)
    if len(rewritten) == 2:
        assert comparison["s"].n_paired == 8  # every example still pairs


def test_postgres_and_sqlite_columns_give_the_sql_paths_comparison(store_url: str) -> None:
    """On either backend: built at finish, read back as bytes, same answer as the SQL."""
    from assay.store import open_store

    store = open_store(store_url)
    try:
        ds, examples = dataset(store, 8)  # type: ignore[arg-type]
        a = experiment(store, ds, examples, "a", ROWS_A)  # type: ignore[arg-type]
        b = experiment(store, ds, examples, "b", {**ROWS_B, (3, 1): (False, {"m": 1.0})})  # type: ignore[arg-type]
        assert has_columns(store, a) and has_columns(store, b)  # type: ignore[arg-type]
        for options in ({}, {"test": "wilcoxon"}, {"interval": "bca"}):
            by_columns = assay.compare("a", "b", client=store, **options)
            assert_same(by_columns, by_sql(store, a, b, **options))  # type: ignore[arg-type]
            store.finish_experiment(a.id, "completed")  # columns again, for the next round
            store.finish_experiment(b.id, "completed")
    finally:
        store.close()


def test_a_write_while_columns_are_read_keeps_them_from_being_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build reads without the write lock; a write of the experiment in that window
    (here from another connection) drops the pending mark, so the stale read is not stored."""
    from assay.store import _columns as columns

    store = SQLiteStore(tmp_path / "s.db")
    other = SQLiteStore(tmp_path / "s.db")
    try:
        a, b, _ = _pair(store)
        reading = columns.read

        def read_then_rescored(conn: object, experiment_id: str) -> columns.ColumnSet:
            built = reading(conn, experiment_id)
            runs = [(uuid.UUID(r), [EvaluationResult(key="s", score=9.0)]) for r in _run_ids(other, b)]
            other.write_results(b.id, runs, replace=True)  # type: ignore[attr-defined]
            return built

        monkeypatch.setattr(columns, "read", read_then_rescored)
        assert columns.refresh(store, str(b.id)) is None
        assert not has_columns(store, b)
        monkeypatch.setattr(columns, "read", reading)
        comparison = assay.compare("a", "b", client=store)  # built now, with the new scores
        assert has_columns(store, b) and comparison["s"].mean_b == pytest.approx(9.0)
        assert_same(comparison, by_sql(store, a, b))
    finally:
        other.close()
        store.close()
