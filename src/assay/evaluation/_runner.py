"""The one async core: plan (example x repetition), skip what is stored, run the rest under
a concurrency limit, stream rows to one writer, then run the summary evaluators."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.errors import RowFailedError
from assay.evaluation._binding import SummaryEvaluator
from assay.evaluation._ramp import Load, quick_switches, ramp
from assay.evaluation._rows import PlannedRow, RowPipeline
from assay.evaluation._shard import WHOLE, Shard
from assay.evaluation._tally import Tally
from assay.evaluation._threads import RowThreads
from assay.evaluation._writer import RowWriter
from assay.schemas import EvaluationResult, Example
from assay.store.base import Store
from assay.store.records import ExperimentRecord, ExperimentRow, ExperimentStats

if TYPE_CHECKING:
    from assay.evaluation.executor import Executor
    from assay.store.fence import Fence


@dataclass
class RunSettings:
    max_concurrency: int
    raise_on_error: bool
    on_row: Callable[[ExperimentRow], None]
    write_figures: bool = True  # False for a shard: its rows are not the experiment's figures
    executor: Executor | None = None  # None: threads and the event loop here
    fence: Fence | None = None  # the lease every write carries (``assay.store.fence``)


class RowFeed:
    """The rows to run, made on demand as workers ask: each (example, repetition) not
    stored yet. Examples are read from the store a page at a time, so a million-row
    plan costs no more memory than a small one. Safe to call from any thread. With a
    ``shard``, only its rows (``done`` and ``total`` then count that shard's rows)."""

    def __init__(
        self,
        examples: Iterable[Example],
        repetitions: int,
        done: set[int],
        total: int,
        shard: Shard = WHOLE,
    ) -> None:
        self._rows = self._plan(examples, repetitions, done, shard)
        self._lock = threading.Lock()
        self._stopped = False
        self.total = total
        self.remaining = total - len(done)
        # called once, when at most ``ending_at`` rows are left to hand out (0: none is)
        self.on_ending: Callable[[], None] | None = None
        self.ending_at = 0

    @staticmethod
    def _plan(
        examples: Iterable[Example], repetitions: int, done: set[int], shard: Shard
    ) -> Iterator[PlannedRow]:
        whole = shard.count == 1
        made = tuple.__new__  # a NamedTuple's own __new__ is Python code; per row, tuple's
        if whole and not done and repetitions == 1:  # the common plan: every example once
            for position, example in enumerate(examples):
                yield made(PlannedRow, (position, example, 0))
            return
        for position, example in enumerate(examples):
            for repetition in range(repetitions):
                index = position * repetitions + repetition
                if (whole or shard.holds(index)) and (not done or index not in done):
                    yield made(PlannedRow, (position, example, repetition))

    def next(self) -> PlannedRow | None:
        ending = None
        with self._lock:
            row = None if self._stopped else next(self._rows, None)
            if row is not None:
                self.remaining -= 1
            if self.on_ending is not None and (row is None or self.remaining <= self.ending_at):
                ending, self.on_ending = self.on_ending, None
        if ending is not None:
            ending()
        return row

    def stop(self) -> None:
        self._stopped = True

    @property
    def exhausted(self) -> bool:
        return self._stopped or self.remaining <= 0


def done_keys(keys: Iterable[tuple[int, int]], repetitions: int) -> set[int]:
    """Stored (position, repetition) pairs as compact integers, for ``RowFeed``."""
    return {position * repetitions + repetition for position, repetition in keys}


async def run_rows(
    pipeline: RowPipeline,
    feed: RowFeed,
    store: Store,
    experiment: ExperimentRecord,
    settings: RunSettings,
    tally: Tally,
) -> ExperimentStats:
    """Run the fed rows; every finished row is written before this returns. Returns the
    experiment's final figures (stored too)."""
    writer = RowWriter(
        store,
        experiment.id,
        tally,
        figures=settings.write_figures,
        expected_rows=feed.remaining,
        fence=settings.fence,
    )
    # The last rows: commit them as they come, so that the final commit is a small one.
    feed.on_ending, feed.ending_at = writer.hurry, writer.max_batch

    def accept(row: ExperimentRow) -> None:
        writer.put(row)
        settings.on_row(row)
        if settings.raise_on_error:
            _raise_first_error(row)

    workers = max(1, min(settings.max_concurrency, feed.remaining))
    try:
        # The pool's exit waits for rows still running in its threads (after a failure or
        # a cancel, the feed is stopped first), so the writer closes after their last put.
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="assay-row") as pool:
            threads = RowThreads()
            try:
                if settings.executor is not None:  # rows run elsewhere; this process stores them
                    await settings.executor.run_rows(pipeline, feed, accept, settings.max_concurrency)
                elif pipeline.all_sync:
                    await _run_in_threads(pipeline, feed, threads, accept, workers)
                else:
                    tasks = [_loop_worker(pipeline, feed, pool, accept) for _ in range(workers)]
                    await _gather_or_fail([asyncio.ensure_future(t) for t in tasks])
            finally:
                feed.stop()
                threads.join()
    except BaseException:
        writer.close()  # what finished is kept
        raise
    return writer.close(finished=True)


async def _loop_worker(
    pipeline: RowPipeline,
    feed: RowFeed,
    pool: ThreadPoolExecutor,
    accept: Callable[[ExperimentRow], None],
) -> None:
    """Some part is async: await it on the loop; sync parts hop to the pool."""
    while (planned := feed.next()) is not None:
        accept(await pipeline.run_async(planned, pool))


async def _run_in_threads(
    pipeline: RowPipeline,
    feed: RowFeed,
    threads: RowThreads,
    accept: Callable[[ExperimentRow], None],
    max_threads: int,
) -> None:
    """Everything is sync: pool threads run rows back to back, with no hop per row.

    Threads are added only while they help (I/O-bound user code such as model calls):
    CPU-bound rows gain nothing from more threads under the GIL, and lose much to
    contention. See ``assay.evaluation._ramp``.
    """
    load = Load()

    def loop() -> None:
        load.worker_started()
        while load.measuring and (planned := feed.next()) is not None:
            if load.first_row is None:
                load.first_row_started()
            wall, cpu = time.perf_counter(), time.thread_time()
            row = pipeline.run_sync(planned)
            load.add(time.perf_counter() - wall, time.thread_time() - cpu)
            accept(row)
        # The ramp is over: no clock reads a row (a thread's CPU clock is a system call).
        while (planned := feed.next()) is not None:
            accept(pipeline.run_sync(planned))

    tasks: list[asyncio.Future[Any]] = [threads.start(loop)]

    def grow(count: int) -> None:
        more = min(count - len(tasks), max(feed.remaining, 1))
        tasks.extend(threads.start(loop) for _ in range(more))
        load.threads = len(tasks)

    with quick_switches():
        await ramp(tasks, grow, load, feed, max_threads)
    load.measuring = False
    # A worker ends once the feed is out of rows: the last rows are running, mostly
    # waiting when there are many threads, so the run's young objects are collected now
    # rather than after the last row, when the collector's threshold is restored.
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    gc.collect(0)
    await _gather_or_fail(tasks)


async def _gather_or_fail(tasks: Sequence[asyncio.Future[Any]]) -> None:
    """Like gather, but the first failure cancels the other workers."""
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            task.result()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _raise_first_error(row: ExperimentRow) -> None:
    where = f"example {row.example.id} (repetition {row.repetition})"
    if row.run.error is not None:
        raise RowFailedError(f"the target failed on {where}: {row.run.error}")
    for result in row.results:
        if result.error is not None:
            raise RowFailedError(f"evaluator {result.key!r} failed on {where}: {result.error}")


async def run_summaries(
    evaluators: Sequence[SummaryEvaluator], available: dict[str, Any]
) -> list[EvaluationResult]:
    """``available``: the per-row lists by argument name (read from the store on demand)."""
    results: list[EvaluationResult] = []
    for evaluator in evaluators:
        if evaluator.is_async:
            results.extend(await evaluator.call_async(available))
        else:
            results.extend(await asyncio.to_thread(evaluator.call_sync, available))
    return results
