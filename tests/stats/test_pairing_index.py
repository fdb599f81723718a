"""The pair columns on results: filled on every write path, migrated into old stores,
and read by ``assay.compare`` with the same answers as the scores themselves give."""

from __future__ import annotations

import re
import sqlite3
import uuid
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sp
from stats_testdata import dataset, experiment

import assay
from assay.schemas import EvaluationResult
from assay.store._schema import MIGRATIONS
from assay.store.sqlite import SQLiteStore

RNG = np.random.default_rng(11)


def created_after(version: int) -> list[tuple[str, str]]:
    """The tables and indexes the migrations after ``version`` create, oldest first."""
    return [
        (match[1], match[2])
        for migration in MIGRATIONS[version:]
        for match in re.finditer(r"CREATE (?:UNIQUE )?(TABLE|INDEX) (\w+)", migration)
    ]


def _to_previous_schema(path: Path) -> None:
    """Turn a store into what the schema before the pair columns (version 4) wrote: same
    tables and rows, no pair columns, no pair index, no later rank index, version 4."""
    with sqlite3.connect(path) as conn:
        for kind, name in reversed(created_after(6)):
            conn.execute(f"DROP {kind} {name}")
        conn.execute("DROP INDEX results_by_rank")
        conn.execute("ALTER TABLE results DROP COLUMN position")
        conn.execute("CREATE INDEX results_by_metric ON results (experiment_id, key, score)")
        conn.execute("DROP INDEX results_by_pair")
        conn.execute("ALTER TABLE results DROP COLUMN example_id")
        conn.execute("ALTER TABLE results DROP COLUMN repetition")
        conn.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    conn.close()


def test_an_old_store_migrates_and_compares_as_before(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store = SQLiteStore(path)
    ds, examples = dataset(store, 60)
    a = RNG.uniform(0, 1, (60, 2))
    b = np.clip(a + 0.05 + RNG.normal(0, 0.1, (60, 2)), 0, 1)
    experiment(store, ds, examples, "a", {"sim": [list(map(float, row)) for row in a]})
    experiment(store, ds, examples, "b", {"sim": [list(map(float, row)) for row in b]})
    before = assay.compare("a", "b", client=store)["sim"]
    store.close()
    _to_previous_schema(path)
    with pytest.raises(sqlite3.OperationalError, match="no such column"):  # really the old shape
        sqlite3.connect(path).execute("SELECT example_id FROM results")
    store = SQLiteStore(path)
    try:
        missing = store.conn.execute(
            "SELECT COUNT(*) FROM results r JOIN runs u ON u.id = r.run_id "
            "WHERE r.example_id IS NOT u.example_id OR r.repetition IS NOT u.repetition"
        ).fetchone()[0]
        assert missing == 0
        after = assay.compare("a", "b", client=store)["sim"]
    finally:
        store.close()
    expected = sp.ttest_rel(b.mean(axis=1), a.mean(axis=1))
    assert after.p_value == pytest.approx(expected.pvalue, rel=1e-9) == before.p_value
    assert after.n_paired == before.n_paired == 60


def test_rescored_results_carry_their_runs_pair(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    try:
        ds, examples = dataset(store, 20)
        record = experiment(store, ds, examples, "a", {"m": [[1.0, 0.0]] * 20})
        runs = store.conn.execute(
            "SELECT id, example_id, repetition FROM runs WHERE experiment_id = ?", (str(record.id),)
        ).fetchall()
        store.write_results(
            record.id,
            [(uuid.UUID(run["id"]), [EvaluationResult(key="new", score=0.5)]) for run in runs],
            replace=False,
        )
        rows = store.conn.execute(
            "SELECT r.example_id, r.repetition, u.example_id, u.repetition FROM results r "
            "JOIN runs u ON u.id = r.run_id WHERE r.key = 'new'"
        ).fetchall()
        assert len(rows) == 40 and all(tuple(row[:2]) == tuple(row[2:]) for row in rows)
    finally:
        store.close()


def test_pairs_follow_the_example_not_the_row_order(tmp_path: Path) -> None:
    """B stored in the reverse order, with one example missing on each side: pairing is
    by (example, repetition), never by position."""
    store = SQLiteStore(tmp_path / "s.db")
    try:
        ds, examples = dataset(store, 50)
        a = RNG.normal(0.5, 0.2, 50)
        b = a + RNG.normal(0.1, 0.1, 50)
        cells_a = [[float(x)] for x in a]
        cells_b = [[float(x)] for x in b]
        cells_a[3] = [None]
        cells_b[7] = [None]
        experiment(store, ds, examples, "a", {"m": cells_a})
        experiment(store, ds, list(reversed(examples)), "b", {"m": list(reversed(cells_b))})
        result = assay.compare("a", "b", client=store)["m"]
        keep = np.ones(50, bool)
        keep[[3, 7]] = False
        expected = sp.ttest_rel(b[keep], a[keep])
        assert result.n_paired == 48 and result.only_a == 1 and result.only_b == 1
        assert result.p_value == pytest.approx(expected.pvalue, rel=1e-9)
    finally:
        store.close()


def _flaky(seed: int):  # noqa: ANN202 - a target and its evaluators, per experiment
    def target(inputs: dict) -> dict:
        if (inputs["x"] + seed) % 7 == 0:
            raise RuntimeError("model timed out")
        return {"y": (inputs["x"] * (seed + 3)) % 10}

    def high(outputs: dict) -> float:
        return outputs["y"] / 10

    def judge(inputs: dict) -> bool:
        if (inputs["x"] + seed) % 5 == 0:
            raise ValueError("judge broke")
        return (inputs["x"] + seed) % 3 == 0

    return target, [high, judge]


def test_stored_figures_of_finished_runs_give_the_counts_a_scan_gives(tmp_path: Path) -> None:
    """Experiments run by ``evaluate`` store their counts; compare reads them instead of
    scanning, and must say exactly what the scan says (errors, skipped, target failures)."""
    client = assay.Client(str(tmp_path / "run.db"))
    data = [{"inputs": {"x": i}, "outputs": {}} for i in range(40)]
    runs = []
    for seed in (1, 2):
        target, evaluators = _flaky(seed)
        runs.append(client.evaluate(target, data=data, evaluators=evaluators, experiment_prefix=f"s{seed}"))
    conn = client.store.conn  # type: ignore[attr-defined]
    assert conn.execute("SELECT COUNT(*) FROM experiment_stats WHERE final = 1").fetchone()[0] == 2
    stored = assay.compare(runs[0], runs[1], client=client)
    conn.execute("DELETE FROM experiment_stats")
    scanned = assay.compare(runs[0], runs[1], client=client)
    client.close()
    assert stored.a == scanned.a and stored.b == scanned.b
    assert stored.a.target_failures > 0
    assert [m.as_dict() for m in stored.metrics] == [m.as_dict() for m in scanned.metrics]
    by_key = {m.key: m for m in stored.metrics}
    assert by_key["judge"].errors_a > 0 and by_key["high"].skipped_a > 0
