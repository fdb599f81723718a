"""The one async core: plan (example x repetition), skip what is stored, run the rest under
a concurrency limit, stream rows to one writer, then run the summary evaluators."""

from __future__ import annotations

import asyncio
import math
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
from assay.evaluation._rows import PlannedRow, RowPipeline
from assay.evaluation._shard import WHOLE, Shard
from assay.evaluation._tally import Tally
from assay.evaluation._threads import RowThreads
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
_WAITING_ROW = 0.1  # a row's thread on a CPU under a tenth of its wall time: it waits


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
    """Finished rows and their mean wall time (recent rows count most), how much of
    their time the rows run by a lone thread spent on a CPU (no GIL to wait for), and
    the process's CPU time per tick. Updated without a lock: a lost update only nudges
    a heuristic."""

    _DECAY = 0.9

    def __init__(self) -> None:
        self.rows = 0
        self.threads = 1
        self.measuring = True  # False once the ramp has decided: rows stop timing themselves
        self._wall = 0.0
        self._weight = 0.0
        self._first_wall = 0.0
        self._first_cpu = 0.0
        self._tick = (time.perf_counter(), time.process_time(), time.thread_time())
        self._clocks: list[int] = []  # the workers' CPU clocks, where the OS has them
        self._workers_tick = (time.perf_counter(), 0.0)
        self._first_stat: str | None = None  # the first worker's scheduler figures (Linux)
        self._first_tick = (time.perf_counter(), 0.0)

    def worker_started(self) -> None:
        """Called by each worker thread, so that rows still running can be measured."""
        if hasattr(time, "pthread_getcpuclockid"):
            self._clocks.append(time.pthread_getcpuclockid(threading.get_ident()))
        if self._first_stat is None:
            self._first_stat = f"/proc/self/task/{threading.get_native_id()}/schedstat"

    def workers_wait(self, *, ask_the_os: bool) -> float | None:
        """The share of the time since the last call the worker threads were on a CPU,
        each, when it is under a tenth and the first one was not kept waiting for a CPU
        by the OS either (0 where the OS does not say: the process's share decides);
        None when they compute."""
        wall, cpu = time.perf_counter(), sum(time.clock_gettime(c) for c in list(self._clocks))
        share = (cpu - self._workers_tick[1]) / max((wall - self._workers_tick[0]) * len(self._clocks), 1e-9)
        self._workers_tick = (wall, cpu)
        first_waits = self._first_waits(wall)  # read every tick: each share is of one tick
        if (self._clocks and share >= _WAITING_ROW) or (ask_the_os and not first_waits):
            return None
        return share if self._clocks else 0.0

    def _first_waits(self, wall: float) -> bool:
        """On a loaded machine a computing thread may get no CPU for a whole tick: it
        is then runnable, not waiting, which Linux's schedstat (CPU time, then time
        spent waiting for a CPU, in ns) tells apart."""
        try:
            with open(self._first_stat or "") as handle:
                on_cpu, queued = handle.read().split()[:2]
        except (OSError, ValueError):
            return True
        busy = (int(on_cpu) + int(queued)) / 1e9
        share = (busy - self._first_tick[1]) / max(wall - self._first_tick[0], 1e-9)
        self._first_tick = (wall, busy)
        return share < _WAITING_ROW

    def add(self, wall: float, cpu: float) -> None:
        self._wall = self._wall * self._DECAY + wall
        self._weight = self._weight * self._DECAY + 1.0
        if self.threads == 1 or self.rows == 0:
            self._first_wall += wall
            self._first_cpu += cpu
        self.rows += 1

    @property
    def rows_wait(self) -> bool:
        """The first rows spent under a tenth of their time on a CPU: they wait for
        something outside the process (a model call, a sleep). A CPU-bound row on a
        machine so loaded that it gets a third of a core still measures ~0.3."""
        return self._first_cpu < _WAITING_ROW * self._first_wall

    def useful_threads(self, max_threads: int) -> int:
        """Rows whose threads are on a CPU a share ``b`` of their time keep at most
        ``1 / b`` threads busy under one GIL; more would only wait for it. A loaded
        machine makes ``b`` look smaller (the OS lends the thread less CPU), so this
        errs on the side of more threads."""
        if self._first_cpu <= 0:
            return max_threads
        return max(1, min(max_threads, math.ceil(self._first_wall / self._first_cpu)))

    @property
    def row_wall(self) -> float:
        return self._wall / self._weight if self._weight else 0.0

    def computing_share(self) -> float:
        """The process's CPU time over wall time since the last call, less the calling
        thread's own: the ramp's work (starting a doubling's threads, reading their
        clocks) is not rows computing, and counting it stopped ramps of waiting rows."""
        wall, cpu, own = time.perf_counter(), time.process_time(), time.thread_time()
        share = (cpu - self._tick[1] - (own - self._tick[2])) / max(wall - self._tick[0], 1e-9)
        self._tick = (wall, cpu, own)
        return share


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
    contention. See ``_ramp``.
    """
    load = _Load()

    def loop() -> None:
        load.worker_started()
        while load.measuring and (planned := feed.next()) is not None:
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

    with _quick_switches():
        await _ramp(tasks, grow, load, feed, max_threads)
    load.measuring = False
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
    grow: Callable[[int], None],
    load: _Load,
    feed: RowFeed,
    max_threads: int,
) -> None:
    """Double the threads while that raises the rate of finished rows (up to
    ``_Load.useful_threads`` once rows compute).

    Until a first row finishes, and afterwards while the first rows' own threads were
    mostly off the CPU (``_Load.rows_wait``), threads double every tick while the
    process mostly waits: 256 threads of 50 ms calls all run within ~50 ms. Otherwise
    each doubling must raise the rate of finished rows by a quarter: rates, unlike CPU
    shares, tell I/O waits from GIL waits, even on a loaded machine. The first rate,
    the baseline, is measured over one row's time (the threads are all busy by then);
    each later one over twice that, so that rows started after the doubling count.
    """
    if not await _while_waiting(tasks, grow, load, feed, max_threads):
        return
    rate_before: float | None = None
    while len(tasks) < (limit := load.useful_threads(max_threads)) and not feed.exhausted:
        rows = 1 if rate_before is None else 2
        rate = await _finished_rate(tasks, load, max(_MIN_WINDOW_S, rows * load.row_wall), rows)
        if rate is None:
            return
        if rate_before is not None and rate < _GAIN * rate_before:
            return  # the last doubling did not help
        rate_before = rate
        grow(min(2 * len(tasks), limit))


async def _while_waiting(
    tasks: list[asyncio.Future[Any]],
    grow: Callable[[int], None],
    load: _Load,
    feed: RowFeed,
    max_threads: int,
) -> bool:
    """Double every tick while the workers and the process mostly wait, before any row
    finished or while the first rows waited; False when a worker ended (the feed is
    done). The workers' own CPU clocks tell a row that computes on a loaded machine
    (its thread gets a third of a core: the process looks idle) from one that waits."""
    load.workers_wait(ask_the_os=False)  # the start of the first tick
    while len(tasks) < max_threads and not feed.exhausted and (load.rows == 0 or load.rows_wait):
        done, _ = await asyncio.wait(tasks, timeout=_RAMP_TICK_S, return_when=asyncio.FIRST_COMPLETED)
        if done:
            return False
        # Before a row finished, ask the OS too: a computing first row may get no CPU
        # for a whole tick. Afterwards a waking thread's wait for a CPU would count.
        share = load.workers_wait(ask_the_os=load.rows == 0)
        process_waits = load.computing_share() < _WAITING_SHARE
        if share is not None and process_waits:
            grow(_threads_for(len(tasks), share, max_threads))
        elif load.rows:
            break  # threads or the process compute most of the time now: let the rates say
    return True


def _threads_for(threads: int, share: float, max_threads: int) -> int:
    """How many threads rows that have been on a CPU ``share`` of their time keep busy
    under one GIL (``1 / share``), at least twice those running: rows that waited a
    whole tick with next to no CPU say so at once, with no doubling tick by tick."""
    useful = max_threads if share * max_threads <= 1 else math.ceil(1 / share)
    return min(max_threads, max(2 * threads, useful))


async def _finished_rate(
    tasks: list[asyncio.Future[Any]], load: _Load, window: float, per_thread: int
) -> float | None:
    """Finished rows per second over ``window``, stretched until enough rows finished
    for the rate to mean something, ``per_thread`` a thread (or None when a worker
    ended: the feed is done)."""
    started, rows_before = time.perf_counter(), load.rows
    wait = window
    while True:
        done, _ = await asyncio.wait(tasks, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
        if done:
            return None
        elapsed = time.perf_counter() - started
        enough = max(_MIN_ROWS, per_thread * len(tasks))  # a rate from fewer finished rows is noise
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
