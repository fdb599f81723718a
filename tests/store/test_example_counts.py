"""Counting a dataset's current examples: exact across additions, updates and deletions on
both backends, and on SQLite answered from the index of current examples (no row of a
removed example is visited)."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from assay.schemas import Example
from assay.store import open_store
from assay.store._schema import MIGRATIONS, SCHEMA_VERSION

set_back = sys.modules["assay_tests_schema_history"].set_back  # tests/_schema_history.py


def _history(url: str) -> tuple[list[int], list[int]]:
    """Adds 30 examples, updates 5, deletes 7, adds 4: (current counts of the dataset
    query and of count_examples after each step, counts at each step's version)."""
    store = open_store(url)
    try:
        dataset = store.create_dataset("counted")
        examples = [Example(inputs={"i": i}) for i in range(30)]
        versions = [store.add_examples(dataset.id, examples)]
        counts = [store.count_examples(dataset.id)]
        for example in examples[:5]:
            versions.append(store.update_example(example.model_copy(update={"outputs": {"o": 1}})))
        counts.append(store.count_examples(dataset.id))
        for example in examples[10:17]:
            versions.append(store.delete_example(example.id))
        counts.append(store.count_examples(dataset.id))
        versions.append(store.add_examples(dataset.id, [Example(inputs={"j": j}) for j in range(4)]))
        counts.append(store.count_examples(dataset.id))
        listed = store.get_dataset(id=dataset.id)
        assert listed is not None
        counts.append(listed.example_count)
        at = [store.count_examples(dataset.id, version=v) for v in (versions[0], versions[5], versions[12])]
        return counts, at
    finally:
        store.close()


def test_counts_follow_additions_updates_and_deletions(store_url: str) -> None:
    counts, at = _history(store_url)
    assert counts == [30, 30, 23, 27, 27]
    assert at == [30, 30, 23]


def test_the_count_reads_the_index_of_current_examples_only(tmp_path: Path) -> None:
    """The plans of the statements the store itself runs to count (traced, not copied)."""
    url = str(tmp_path / "plan.db")
    _history(url)
    store = open_store(url)
    try:
        dataset = store.get_dataset(name="counted")
        assert dataset is not None
        counts: list[str] = []
        store.conn.set_trace_callback(lambda sql: counts.append(sql) if "COUNT(*)" in sql else None)
        store.count_examples(dataset.id)
        store.get_dataset(id=dataset.id)
        store.conn.set_trace_callback(None)
        plans = [
            " ".join(str(part) for row in store.conn.execute(f"EXPLAIN QUERY PLAN {sql}") for part in row)
            for sql in counts
        ]
    finally:
        store.close()
    assert len(plans) == 2
    assert all("USING INDEX examples_alive" in plan for plan in plans), plans


def test_a_store_of_the_previous_schema_gets_the_index_and_keeps_its_counts(tmp_path: Path) -> None:
    url = str(tmp_path / "old.db")
    _history(url)
    before = next(i for i, script in enumerate(MIGRATIONS) if "CREATE INDEX examples_alive" in script)
    with sqlite3.connect(url) as conn:  # as the schema before the index left it
        set_back(conn, before)
    store = open_store(url)
    try:
        dataset = store.get_dataset(name="counted")
        assert dataset is not None and dataset.example_count == 27
        assert store.count_examples(dataset.id) == 27
    finally:
        store.close()
    with sqlite3.connect(url) as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        version = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    assert "examples_alive" in names and version == str(SCHEMA_VERSION)
