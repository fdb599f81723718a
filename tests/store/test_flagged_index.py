"""The failed-rows filter reads an index of the flagged rows alone: a row that passes
costs its write no entry in it (on PostgreSQL, index upkeep is most of the server's CPU
for a row), the filter still reads its rows in data order from the index, and a store
of the schema before gets it on open."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

from assay import Client
from assay.store import open_store
from assay.store._schema import MIGRATIONS, SCHEMA_VERSION
from assay.store.read.database import ReadOnlyDatabase
from assay.ui import queries
from assay.ui.models import RowFilter

set_back = sys.modules["assay_tests_schema_history"].set_back  # tests/_schema_history.py

ROWS = 30
FAILING = [x for x in range(ROWS) if x % 3 == 0]


def _not_a_third(outputs: dict[str, Any]) -> bool:
    return outputs["x"] % 3 != 0


def _evaluated(url: str) -> str:
    """An experiment of ROWS rows, the FAILING ones scoring 0; its name."""
    client = Client(url)
    try:
        data = [{"inputs": {"x": x}} for x in range(ROWS)]
        results = client.evaluate(lambda inputs: {"x": inputs["x"]}, data=data, evaluators=[_not_a_third])
        return results.experiment_name
    finally:
        client.close()


def _index_entries(store: Any, url: str) -> float:
    """How many entries ``runs_flagged`` holds, as the database counts them."""
    if url.startswith("sqlite"):
        store.conn.execute("ANALYZE")
        stat = store.conn.execute("SELECT stat FROM sqlite_stat1 WHERE idx = 'runs_flagged'").fetchone()
        return float(stat[0].split()[0])
    store.conn.execute("REINDEX INDEX runs_flagged")  # a build counts its entries exactly
    return float(
        store.conn.execute("SELECT reltuples FROM pg_class WHERE relname = 'runs_flagged'").fetchone()[0]
    )


def test_only_the_flagged_rows_are_in_the_index(store_url: str) -> None:
    _evaluated(store_url)
    store = open_store(store_url)
    try:
        flagged = store.conn.execute("SELECT COUNT(*) FROM runs WHERE failed = 1").fetchone()[0]
        assert flagged == len(FAILING)
        assert _index_entries(store, store_url) == len(FAILING)
    finally:
        store.close()


def test_the_failed_rows_are_read_from_the_index_in_data_order(tmp_path: Path) -> None:
    url = str(tmp_path / "flagged.db")
    name = _evaluated(url)
    store = open_store(url)
    db = ReadOnlyDatabase(store)
    plans: list[str] = []
    original = db.query

    def explained(sql: str, params: Any = ()) -> Any:
        if "u.failed = 1" in sql:
            plans.append(" / ".join(row[3] for row in original(f"EXPLAIN QUERY PLAN {sql}", params)))
        return original(sql, params)

    db.query = explained  # type: ignore[method-assign]
    try:
        experiment = queries.find_experiment(db, name)
        assert experiment is not None
        page = queries.row_page(db, experiment, RowFilter(failed=True), page=1, per_page=ROWS)
        assert [row.position for row in page.rows] == FAILING
        # in data order from the index: no sort of the rows it finds (the order's repeated
        # position leaves SQLite a sort of each position's ties, as before)
        assert plans and all(
            "USING INDEX runs_flagged" in plan and "TEMP B-TREE FOR ORDER BY" not in plan for plan in plans
        ), plans
    finally:
        db.close()
        store.close()


def test_a_store_of_the_previous_schema_gets_the_index(tmp_path: Path) -> None:
    url = str(tmp_path / "old.db")
    _evaluated(url)
    before = next(i for i, script in enumerate(MIGRATIONS) if "runs_flagged" in script)
    with sqlite3.connect(url) as conn:  # as the schema before the index left it
        set_back(conn, before)
        conn.execute("CREATE INDEX runs_by_failed ON runs (experiment_id, failed, position, repetition)")
    open_store(url).close()
    with sqlite3.connect(url) as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    assert "runs_flagged" in names and "runs_by_failed" not in names and version == str(SCHEMA_VERSION)
