"""The one async core: plan (example x repetition), skip what is stored, run the rest under
a concurrency limit, stream rows to one writer, then run the summary evaluators."""

from __future__ import annotations

import asyncio
import functools
import gc
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.errors import RowFailedError
from assay.evaluation._binding import SummaryEvaluator
from assay.evaluation._feed import RowFeed
from assay.evaluation._ramp import Load, QuickSwitches, ramp
from assay.evaluation._rows import RowPipeline
from assay.evaluation._tally import Tally
from assay.evaluation._threads import RowThreads
from assay.evaluation._writer import RowWriter
from assay.schemas import EvaluationResult
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


_FEW_THREADS = 8
_FIRST_WAVE = 256  # rows planned ahead as the first row starts, at most


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
    # The run's young objects (its rows' records: the collector's threshold is raised
    # while it runs) are collected as the feed hands out its last row: then every
    # thread has its last row in flight, and rows that wait are all waiting. Later
    # (as the first worker ends), the collection held the GIL among the last rows'
    # ends, 3.7-9 ms in the last of 1,024 rows; after the last row, it is on the end's clock.
    running = asyncio.get_running_loop()
    feed.on_empty = functools.partial(_soon, running, gc.collect, 0)

    def loop() -> None:
        load.worker_started()
        while load.measuring and (planned := feed.next()) is not None:
            if load.first_row is None:
                # The rows of the threads the ramp may add, planned by the loop while this
                # row runs (the ramp waits for its evidence meanwhile), not as it adds them:
                # reading 255 examples there held all 255 threads back (~1 ms idle).
                _soon(running, feed.plan_ahead_quietly, min(max_threads, _FIRST_WAVE))
                load.first_row_started()  # after: the row's evidence is its own CPU
            wall, cpu = time.perf_counter(), time.thread_time()
            row = pipeline.run_sync(planned)
            load.add(time.perf_counter() - wall, time.thread_time() - cpu)
            accept(row)
        # The ramp is over: no clock reads a row (a thread's CPU clock is a system call).
        while (planned := feed.next()) is not None:
            accept(pipeline.run_sync(planned))

    feed.plan_ahead(1)  # here, on a connection to the store this thread has already
    tasks: list[asyncio.Future[Any]] = [threads.start(loop)]

    switches = QuickSwitches()

    def grow(count: int) -> None:
        more = min(count - len(tasks), max(feed.remaining, 1))
        feed.plan_ahead(more)
        if len(tasks) + more > _FEW_THREADS:  # a few threads top the feed up themselves
            feed.top_up_by = functools.partial(_soon, running)
            switches.end()  # rows that wait hand the GIL over at every wait
        tasks.extend(threads.start(loop) for _ in range(more))
        load.threads = len(tasks)

    with switches:
        await ramp(tasks, grow, load, feed, max_threads)
    load.measuring = False
    await _gather_or_fail(tasks)


def _soon(loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], *args: Any) -> None:
    """``fn(*args)`` on ``loop`` (from another thread), unless the loop is closed."""
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # closed: the run is over
        pass


async def _gather_or_fail(tasks: Sequence[asyncio.Future[Any]]) -> None:
    """Like gather, but the first failure cancels the other workers."""
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            task.result()
    finally:
        for task in tasks:
            if not task.done():
                task.cancel()
            elif not task.cancelled():
                task.exception()  # retrieved: asyncio logs a failure nobody retrieved
        # only what cancelling left running (a task ends at its next await): gathering
        # 256 finished threads' futures cost ~1-2 ms on the run's end
        if running := [task for task in tasks if not task.done()]:
            await asyncio.gather(*running, return_exceptions=True)


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
