"""The one async core: plan (example x repetition), skip what is stored, run the rest under
a concurrency limit, stream rows to one writer, then run the summary evaluators."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.errors import AssayError
from assay.evaluation._binding import SummaryEvaluator
from assay.evaluation._rows import PlannedRow, RowPipeline, in_thread
from assay.evaluation._shard import WHOLE, Shard
from assay.evaluation._tally import Tally
from assay.evaluation._writer import RowWriter
from assay.schemas import EvaluationResult, Example
from assay.store.base import Store
from assay.store.records import ExperimentRecord, ExperimentRow, ExperimentStats

if TYPE_CHECKING:
    from assay.executors.base import Executor

_RAMP_TICK_S = 0.005
_MIN_WINDOW_S = 0.02
_RAMP_SWITCH_S = 0.0005
_GAIN = 1.25
_WAITING_SHARE = 0.5  # process CPU time under half the wall time: threads wait
_MIN_ROWS = 8
_MAX_WINDOW_S = 0.25


class RowFailedError(AssayError, RuntimeError):
    """With ``error_handling="raise"``: the first target or evaluator error."""


@dataclass
class RunSettings:
    max_concurrency: int
    raise_on_error: bool
    on_row: Callable[[ExperimentRow], None]
    write_figures: bool = True  # False for a shard: its rows are not the experiment's figures
    executor: Executor | None = None  # None: threads and the event loop here


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

    @staticmethod
    def _plan(
        examples: Iterable[Example], repetitions: int, done: set[int], shard: Shard
    ) -> Iterator[PlannedRow]:
        whole = shard.count == 1
        for position, example in enumerate(examples):
            for repetition in range(repetitions):
                index = position * repetitions + repetition
                if (whole or shard.holds(index)) and (not done or index not in done):
                    yield PlannedRow(position, example, repetition)

    def next(self) -> PlannedRow | None:
        with self._lock:
            row = None if self._stopped else next(self._rows, None)
            if row is not None:
                self.remaining -= 1
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
    writer = RowWriter(store, experiment.id, tally, figures=settings.write_figures)

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
            try:
                if settings.executor is not None:  # rows run elsewhere; this process stores them
                    await settings.executor.run_rows(pipeline, feed, accept, settings.max_concurrency)
                elif pipeline.all_sync:
                    await _run_in_threads(pipeline, feed, pool, accept, workers)
                else:
                    tasks = [_loop_worker(pipeline, feed, pool, accept) for _ in range(workers)]
                    await _gather_or_fail([asyncio.ensure_future(t) for t in tasks])
            finally:
                feed.stop()
    except BaseException:
        writer.close()  # what finished is kept
        raise
    return writer.close()


async def _loop_worker(
    pipeline: RowPipeline,
    feed: RowFeed,
    pool: ThreadPoolExecutor,
    accept: Callable[[ExperimentRow], None],
) -> None:
    """Some part is async: await it on the loop; sync parts hop to the pool."""
    while (planned := feed.next()) is not None:
        accept(await pipeline.run_async(planned, pool))


class _Load:
    """Finished rows and their mean wall time (recent rows count most), and the process's
    CPU time per tick. Updated without a lock: a lost update only nudges a heuristic."""

    _DECAY = 0.9

    def __init__(self) -> None:
        self.rows = 0
        self._wall = 0.0
        self._weight = 0.0
        self._tick = (time.perf_counter(), time.process_time())

    def add(self, wall: float) -> None:
        self._wall = self._wall * self._DECAY + wall
        self._weight = self._weight * self._DECAY + 1.0
        self.rows += 1

    @property
    def row_wall(self) -> float:
        return self._wall / self._weight if self._weight else 0.0

    def computing_share(self) -> float:
        """The process's CPU time over wall time since the last call."""
        wall, cpu = time.perf_counter(), time.process_time()
        share = (cpu - self._tick[1]) / max(wall - self._tick[0], 1e-9)
        self._tick = (wall, cpu)
        return share


async def _run_in_threads(
    pipeline: RowPipeline,
    feed: RowFeed,
    pool: ThreadPoolExecutor,
    accept: Callable[[ExperimentRow], None],
    max_threads: int,
) -> None:
    """Everything is sync: pool threads run rows back to back, with no hop per row.

    Threads are added only while they help (I/O-bound user code such as model calls):
    CPU-bound rows gain nothing from more threads under the GIL, and lose much to
    contention. See ``_ramp``.
    """
    load = _Load()

    def loop() -> None:
        while (planned := feed.next()) is not None:
            wall = time.perf_counter()
            row = pipeline.run_sync(planned)
            load.add(time.perf_counter() - wall)
            accept(row)

    tasks: list[asyncio.Future[Any]] = [asyncio.ensure_future(in_thread(pool, loop))]

    def double() -> None:
        more = min(len(tasks), max_threads - len(tasks), max(feed.remaining, 1))
        tasks.extend(asyncio.ensure_future(in_thread(pool, loop)) for _ in range(more))

    with _quick_switches():
        await _ramp(tasks, double, load, feed, max_threads)
    await _gather_or_fail(tasks)


_switch_lock = threading.Lock()
_switch_depth = 0
_switch_saved = 0.005


@contextmanager
def _quick_switches() -> Iterator[None]:
    """A shorter GIL switch interval while threads are being added.

    A new thread must take the GIL once before ``Thread.start`` returns; with busy
    threads around, that waits for a forced switch (5 ms by default), so starting 128
    threads took ~0.4 s here and ~0.04 s at 0.5 ms. Restored when the last ramp ends
    (experiments may overlap).
    """
    global _switch_depth, _switch_saved
    with _switch_lock:
        if _switch_depth == 0:
            _switch_saved = sys.getswitchinterval()
            sys.setswitchinterval(min(_switch_saved, _RAMP_SWITCH_S))
        _switch_depth += 1
    try:
        yield
    finally:
        with _switch_lock:
            _switch_depth -= 1
            if _switch_depth == 0:
                sys.setswitchinterval(_switch_saved)


async def _ramp(
    tasks: list[asyncio.Future[Any]],
    double: Callable[[], None],
    load: _Load,
    feed: RowFeed,
    max_threads: int,
) -> None:
    """Double the threads while that raises the rate of finished rows.

    Until a first row finishes, threads double every tick while the process mostly
    waits (so 256 threads of 50 ms calls all run within ~50 ms). Afterwards each
    doubling must raise the rate of finished rows, measured over twice a row's time,
    by a quarter: rates, unlike CPU shares, tell I/O waits from GIL waits, even on a
    loaded machine.
    """
    rate_before: float | None = None
    while len(tasks) < max_threads and not feed.exhausted:
        if load.rows == 0:
            done, _ = await asyncio.wait(tasks, timeout=_RAMP_TICK_S, return_when=asyncio.FIRST_COMPLETED)
            if done:
                return
            if load.computing_share() < _WAITING_SHARE:
                double()
            continue
        rate = await _finished_rate(tasks, load, max(_MIN_WINDOW_S, 2 * load.row_wall))
        if rate is None:
            return
        if rate_before is not None and rate < _GAIN * rate_before:
            return  # the last doubling did not help
        rate_before = rate
        double()


async def _finished_rate(tasks: list[asyncio.Future[Any]], load: _Load, window: float) -> float | None:
    """Finished rows per second over ``window``, stretched until enough rows finished
    for the rate to mean something (or None when a worker ended: the feed is done)."""
    started, rows_before = time.perf_counter(), load.rows
    wait = window
    while True:
        done, _ = await asyncio.wait(tasks, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
        if done:
            return None
        elapsed = time.perf_counter() - started
        enough = max(_MIN_ROWS, 2 * len(tasks))  # a rate from fewer finished rows is noise
        if load.rows - rows_before >= enough or elapsed >= _MAX_WINDOW_S:
            return (load.rows - rows_before) / elapsed
        wait = window / 2


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
