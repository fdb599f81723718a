"""An example found by its id alone (``read_example``, ``update_example``,
``delete_example``: LangSmith's calls take no dataset) costs a probe per dataset, not a
scan of every stored example: a loop updating each example of a large dataset stays
linear."""

from __future__ import annotations

import sys
import uuid
from typing import Any

import psycopg

from assay.schemas import Example
from assay.store import open_store

entries_read = sys.modules["assay_tests_postgres"].examples_entries_read  # tests/_postgres.py

SMALL, LARGE = 2_000, 16_000


def _filled(url: str, count: int) -> tuple[Any, list[uuid.UUID]]:
    store = open_store(url)
    dataset = store.create_dataset(f"d-{uuid.uuid4().hex[:6]}")
    ids = [uuid.uuid4() for _ in range(count)]
    store.add_examples(
        dataset.id, [Example(id=i, dataset_id=dataset.id, inputs={"x": n}) for n, i in enumerate(ids)]
    )
    return store, ids


def _lookups(store: Any, ids: list[uuid.UUID]) -> None:
    """What a user's loop does to a few examples: read, update, read again, delete."""
    for n, example_id in enumerate(ids):
        found = store.get_example(example_id)
        assert found is not None and found.inputs == {"x": found.inputs["x"]}
        store.update_example(Example(id=example_id, dataset_id=found.dataset_id, inputs={"x": -n}))
        assert store.get_example(example_id).inputs == {"x": -n}
    store.delete_example(ids[0])
    assert store.get_example(ids[0]) is None


def _sqlite_steps(store: Any, ids: list[uuid.UUID]) -> int:
    """SQLite virtual-machine steps (in thousands) that looking ``ids`` up costs."""
    steps = 0

    def counted() -> int:
        nonlocal steps
        steps += 1
        return 0

    store.conn.set_progress_handler(counted, 1000)
    try:
        _lookups(store, ids)
    finally:
        store.conn.set_progress_handler(None, 1000)
    return steps


def test_sqlite_finds_an_example_by_id_without_reading_the_others(tmp_path: Any) -> None:
    costs = []
    for count in (SMALL, LARGE):
        store, ids = _filled(str(tmp_path / f"{count}.db"), count)
        costs.append(_sqlite_steps(store, ids[-20:]))
        store.close()
    small, large = costs
    # a scan reads every example: 8x the examples, 8x the steps; probes cost about the same
    assert large <= 2 * small + 5, (
        f"20 examples' lookups cost {small}k steps at {SMALL:,}, {large}k at {LARGE:,}"
    )


def test_postgres_finds_an_example_by_id_without_reading_the_others(postgres_store_url: str) -> None:
    store, ids = _filled(postgres_store_url, LARGE)
    store.close()
    with psycopg.connect(postgres_store_url, autocommit=True) as admin:
        before = entries_read(admin, LARGE)
        store = open_store(postgres_store_url)
        _lookups(store, ids[-20:])  # 20 new versions
        store.close()
        read = entries_read(admin, LARGE + 20) - before
    assert read < LARGE, f"20 examples' lookups read {read} entries of a {LARGE:,}-example dataset"
