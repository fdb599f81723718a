"""The store's side of fencing, on a SQLite file and on PostgreSQL: once a lease is taken
over, every write that names the old token is refused whole, in the same transaction,
whichever way it goes (in this process, or through the SQLite writer process); the new
holder's writes go on. (tests/cli/test_fencing.py pauses real runs past their lease.)"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest

from assay import Client
from assay.schemas import EvaluationResult, Run
from assay.store.base import Store
from assay.store.fence import Fence, LeaseFencedError
from assay.store.records import ExperimentRecord, ExperimentRow, ExperimentStats


@pytest.fixture
def setup(store_url: str) -> Iterator[tuple[Store, ExperimentRecord, list[ExperimentRow]]]:
    client = Client(store_url)
    dataset = client.create_dataset("fence")
    client.create_examples(inputs=[{"i": i} for i in range(40)], dataset_name="fence")
    record = ExperimentRecord(name="fence", dataset_id=dataset.id, dataset_version=1)
    client.store.create_experiment(record)
    examples = list(client.store.iter_examples(dataset.id))
    now = datetime.now(timezone.utc)
    rows = [
        ExperimentRow(
            run=Run(inputs=ex.inputs, outputs={"i": i}, start_time=now, end_time=now),
            example=ex,
            repetition=0,
            position=i,
            results=[EvaluationResult(key="s", score=1.0)],
        )
        for i, ex in enumerate(examples)
    ]
    yield client.store, record, rows
    client.close()


def take(store: Store, record: ExperimentRecord, token: str, stale: str | None = None) -> Fence:
    lease = store.take_lease(record.id, 0, 1, host="h", pid=1, token=token, ttl=30, stale_token=stale)
    assert lease.token == token
    return Fence(record.id, 0, token)


def started(batches: Any) -> Any:
    """A SQLite file's batch writer with its writer process ready: batches go through it."""
    batches.expect(10_000)
    process = getattr(batches, "process", None)
    deadline = time.monotonic() + 60
    while process is not None and process.state() == "starting" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert process is None or process.state() == "ready"
    return batches


def test_writes_naming_a_lease_taken_over_are_refused_whole(
    setup: tuple[Store, ExperimentRecord, list[ExperimentRow]],
) -> None:
    store, record, rows = setup
    old = take(store, record, "old")
    store.write_batch(record.id, [store.prepare_row(record.id, r) for r in rows[:10]], None, old)
    new = take(store, record, "new", stale="old")  # the old holder is known gone
    figures = ExperimentStats(rows=999)
    with pytest.raises(LeaseFencedError, match="no longer this run's"):
        store.write_batch(record.id, [store.prepare_row(record.id, r) for r in rows[10:20]], figures, old)
    with pytest.raises(LeaseFencedError):
        store.write_stats(record.id, figures, old)
    with pytest.raises(LeaseFencedError):
        store.finish_experiment(record.id, "failed", old)
    batches = started(store.batch_writer(record.id, old))
    with pytest.raises(LeaseFencedError):
        batches.write([store.prepare_row(record.id, r) for r in rows[20:30]], figures)
        batches.flush()  # a writer may raise a batch's error once its answer is read
    batches.close()
    assert store.count_rows(record.id) == 10
    stats = store.load_stats(record.id)
    assert stats is None or stats.rows != 999
    current = store.get_experiment(id=record.id)
    assert current is not None and current.status == "running"
    # the holder is undisturbed
    batches = started(store.batch_writer(record.id, new))
    batches.write([store.prepare_row(record.id, r) for r in rows[10:]], ExperimentStats(rows=40))
    batches.flush()
    assert getattr(batches, "rows_by_process", 30) == 30
    batches.close()
    store.finish_experiment(record.id, "completed", new)
    assert store.count_rows(record.id) == 40
    current = store.get_experiment(id=record.id)
    assert current is not None and current.status == "completed"


def test_a_fence_of_another_experiment_or_shard_holds_nothing(
    setup: tuple[Store, ExperimentRecord, list[ExperimentRow]],
) -> None:
    store, record, rows = setup
    take(store, record, "mine")
    for fence in (Fence(uuid.uuid4(), 0, "mine"), Fence(record.id, 1, "mine"), Fence(record.id, 0, "x")):
        with pytest.raises(LeaseFencedError):
            store.write_batch(record.id, [store.prepare_row(record.id, rows[0])], None, fence)
    assert store.count_rows(record.id) == 0
