"""People's feedback is read by experiment (queues, human metrics, the row table): an
index serves that on both backends, and a store of the schema before gets it on open."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from assay import Client
from assay.store import open_store
from assay.store._schema import MIGRATIONS, SCHEMA_VERSION

set_back = sys.modules["assay_tests_schema_history"].set_back  # tests/_schema_history.py


def _feedback(url: str) -> tuple[str, list[str]]:
    """Two experiments' rows, each labelled by a person; (first experiment id, its run ids)."""
    client = Client(url)
    try:
        data = [{"inputs": {"q": i}} for i in range(6)]
        ids = []
        for name in ("first", "second"):
            results = client.evaluate(lambda inputs: {"a": inputs["q"]}, data=data, experiment=name)
            rows = list(results)
            for row in rows:
                client.create_feedback(
                    row["run"].id,
                    "human",
                    score=1,
                    feedback_source_type="human",
                    source_info={"annotator": "Ann"},
                )
            ids.append((str(results.experiment_id), [str(row["run"].id) for row in rows]))
        return ids[0]
    finally:
        client.close()


def test_the_feedback_of_one_experiment_is_a_range_of_its_index(store_url: str) -> None:
    experiment, runs = _feedback(store_url)
    store = open_store(store_url)
    try:
        if store_url.startswith("sqlite"):
            plan = " ".join(
                str(part)
                for row in store.conn.execute(
                    "EXPLAIN QUERY PLAN SELECT run_id FROM feedback WHERE experiment_id IN (?) "
                    "ORDER BY created_at",
                    (experiment,),
                )
                for part in row
            )
            assert "USING INDEX feedback_by_experiment" in plan, plan
        else:
            names = {row[0] for row in store.conn.execute("SELECT indexname FROM pg_indexes").fetchall()}
            assert "feedback_by_experiment" in names
        labelled = [f for f in store.list_feedback(keys=["human"]) if str(f.session_id) == experiment]
        assert sorted(str(f.run_id) for f in labelled) == sorted(runs)
    finally:
        store.close()


def test_a_store_of_the_previous_schema_gets_the_index(tmp_path: Path) -> None:
    url = str(tmp_path / "old.db")
    _feedback(url)
    before = next(i for i, script in enumerate(MIGRATIONS) if "feedback_by_experiment" in script)
    with sqlite3.connect(url) as conn:  # as the schema before the index left it
        set_back(conn, before)
    open_store(url).close()
    with sqlite3.connect(url) as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        count = conn.execute("SELECT COUNT(*) FROM feedback").fetchone()[0]
    assert "feedback_by_experiment" in names and version == str(SCHEMA_VERSION) and count == 12
