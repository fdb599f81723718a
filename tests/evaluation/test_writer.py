"""The writer: once the feed has at most a batch of rows left, what the last rows bring is
committed as soon as the store is free instead of after the interval, so that closing
has little left to flush."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from assay import Client
from assay.evaluation._feed import RowFeed
from assay.evaluation._writer import RowWriter
from assay.schemas import EvaluationResult, Example, Run
from assay.store.records import ExperimentRecord, ExperimentRow


def _rows(client: Client, count: int) -> tuple[ExperimentRecord, list[ExperimentRow]]:
    dataset = client.create_dataset("writer")
    client.create_examples(inputs=[{"i": i} for i in range(count)], dataset_name="writer")
    examples: list[Example] = list(client.store.iter_examples(dataset.id))
    record = ExperimentRecord(name="writer", dataset_id=dataset.id, dataset_version=dataset.version)
    client.store.create_experiment(record)
    now = datetime.now(timezone.utc)
    rows = [
        ExperimentRow(
            run=Run(inputs=example.inputs, outputs={"o": i}, start_time=now, end_time=now),
            example=example,
            repetition=0,
            position=i,
            results=[EvaluationResult(key="s", score=1.0)],
        )
        for i, example in enumerate(examples)
    ]
    return record, rows


def _stored_within(client: Client, record: ExperimentRecord, rows: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if client.store.count_rows(record.id) == rows:
            return True
        time.sleep(0.01)
    return False


def test_rows_after_the_feed_ran_out_are_committed_at_once(client: Client) -> None:
    record, rows = _rows(client, 3)
    writer = RowWriter(client.store, record.id, max_delay=60.0)  # the interval never elapses here
    try:
        writer.put(rows[0])
        assert not _stored_within(client, record, 1, 0.3)  # waits for its interval
        writer.hurry()  # the feed is nearly out: the rows still running are the last ones
        assert _stored_within(client, record, 1, 30.0)
        writer.put(rows[1])
        writer.put(rows[2])
        assert _stored_within(client, record, 3, 30.0)
    finally:
        stats = writer.close()
    assert stats.rows == 3 and stats.final
    assert client.read_experiment("writer").aggregate["s"].n == 3


def test_the_feed_says_once_when_a_batch_or_less_is_left() -> None:
    calls: list[int] = []
    feed = RowFeed([Example(inputs={"i": i}) for i in range(10)], 1, set(), 10)
    feed.on_ending, feed.ending_at = lambda: calls.append(feed.remaining), 3
    handed = [feed.next() for _ in range(12)]
    assert [row.position for row in handed if row is not None] == list(range(10))
    assert calls == [3]  # after the 7th row, once


def test_a_feed_smaller_than_a_batch_says_so_at_its_first_row() -> None:
    calls: list[int] = []
    feed = RowFeed([Example(inputs={"i": i}) for i in range(2)], 1, set(), 2)
    feed.on_ending, feed.ending_at = lambda: calls.append(feed.remaining), 5
    assert feed.next() is not None
    assert calls == [1]
    assert feed.next() is not None and feed.next() is None
    assert calls == [1]


def test_the_run_ends_in_one_transaction_with_its_final_figures(client: Client) -> None:
    """Whatever is queued when the last row is in goes in one commit, more than a batch
    included, and the final figures with it: the run's end waits for one commit's fsync
    and round trip, not one per batch and one more for the figures."""
    record, rows = _rows(client, 6)
    writes: list[tuple[int, bool | None]] = []
    figures_alone: list[object] = []
    store = client.store
    batch_writer, write_stats = store.batch_writer, store.write_stats
    holder: list[RowWriter] = []

    def recording(*args: object, **kwargs: object) -> object:
        batches = batch_writer(*args, **kwargs)  # type: ignore[arg-type]
        write = batches.write

        def writing(prepared: Any, stats: Any) -> None:
            if not writes:  # the first batch waits until the run closes: the rest queue up
                writer = holder[0]
                with writer._cond:
                    writer._cond.wait_for(lambda: writer._closing)
            writes.append((len(prepared), None if stats is None else stats.final))
            write(prepared, stats)

        batches.write = writing  # type: ignore[method-assign]
        return batches

    store.batch_writer = recording  # type: ignore[method-assign]
    store.write_stats = lambda *args, **kwargs: figures_alone.append(args)  # type: ignore[method-assign]
    writer = RowWriter(store, record.id, max_batch=2, max_pending=6, max_delay=60.0)
    holder.append(writer)
    writer.put(rows[0])
    writer.put(rows[1])  # a batch: the writer takes it, and waits in it for the close
    with writer._cond:
        writer._cond.wait_for(lambda: not writer._pending)
    for row in rows[2:]:
        writer.put(row)
    stats = writer.close(finished=True)
    store.batch_writer, store.write_stats = batch_writer, write_stats  # type: ignore[method-assign]
    assert writes == [(2, False), (4, True)]  # the first batch's counts; then the rest, final
    assert figures_alone == []  # no transaction of their own
    assert stats.rows == 6 and stats.final
    assert client.store.count_rows(record.id) == 6
    stored = client.read_experiment("writer")
    assert stored.aggregate["s"].n == 6


def test_a_store_that_fell_behind_gets_all_that_queued_meanwhile_in_one_batch(client: Client) -> None:
    """Rows queued while a commit was slow go in one batch, more than ``max_batch`` if
    that is what queued: each commit's fixed cost is shared by more rows, and the writer
    catches up with fewer commits."""
    record, rows = _rows(client, 6)
    writes: list[int] = []
    slow_commit_may_end = threading.Event()
    store = client.store

    def writing(write: Callable[[Any, Any], None], prepared: Any, stats: Any) -> None:
        if not writes:  # the first commit is slow: rows queue up meanwhile
            slow_commit_may_end.wait()
        writes.append(len(prepared))
        write(prepared, stats)

    batch_writer = _writes_through(store, writing)
    writer = RowWriter(store, record.id, max_batch=2, max_pending=6, max_delay=60.0)
    writer.put(rows[0])
    writer.put(rows[1])  # a batch: the writer takes it into its slow commit
    with writer._cond:
        writer._cond.wait_for(lambda: not writer._pending)
    for row in rows[2:]:
        writer.put(row)
    slow_commit_may_end.set()
    with writer._cond:  # the writer took what queued
        writer._cond.wait_for(lambda: not writer._pending)
    stats = writer.close(finished=True)
    store.batch_writer = batch_writer  # type: ignore[method-assign]
    assert writes == [2, 4, 0]  # not 2, 2, 2; then the end: nothing queued, the final figures
    assert stats.rows == 6 and client.store.count_rows(record.id) == 6


def test_rows_queued_and_being_written_stay_within_what_a_crash_may_lose(client: Client) -> None:
    """A batch may take more than ``max_batch`` rows when the store fell behind, but the
    rows handed over and not yet committed (what a crash loses) never exceed
    ``max_pending + max_batch``: workers wait for the bigger batch to be written."""
    record, rows = _rows(client, 20)
    counts = {"handed": 0, "committed": 0, "most_unstored": 0}
    lock = threading.Lock()
    all_handed = threading.Event()
    store = client.store

    def slow_writing(write: Callable[[Any, Any], None], prepared: Any, stats: Any) -> None:
        all_handed.wait(0.2)  # a slow store: the worker queues all it may meanwhile
        write(prepared, stats)
        with lock:
            counts["committed"] += len(prepared)

    batch_writer = _writes_through(store, slow_writing)
    writer = RowWriter(store, record.id, max_batch=2, max_pending=4, max_delay=60.0)

    def worker() -> None:
        for row in rows:
            writer.put(row)
            with lock:
                counts["handed"] += 1
                unstored = counts["handed"] - counts["committed"]
                counts["most_unstored"] = max(counts["most_unstored"], unstored)
        all_handed.set()

    putting = threading.Thread(target=worker)
    putting.start()
    putting.join()
    stats = writer.close(finished=True)
    store.batch_writer = batch_writer  # type: ignore[method-assign]
    assert counts["most_unstored"] <= 4 + 2
    assert stats.rows == 20 and client.store.count_rows(record.id) == 20


def _writes_through(store: Any, writing: Callable[[Callable[[Any, Any], None], Any, Any], None]) -> Any:
    """Every batch the store's batch writers write goes through ``writing(write, prepared,
    stats)``; returns the store's own ``batch_writer``, to put back."""
    batch_writer = store.batch_writer

    def recording(*args: Any, **kwargs: Any) -> Any:
        batches = batch_writer(*args, **kwargs)
        write = batches.write
        batches.write = lambda prepared, stats: writing(write, prepared, stats)
        return batches

    store.batch_writer = recording
    return batch_writer
