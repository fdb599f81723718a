"""How many threads sync rows get: as many as keep one GIL busy, decided from the rows'
own evidence while they run.

Rows that wait (a model call, a sleep) gain from every thread up to ``max_concurrency``;
rows that compute gain nothing from more threads under the GIL and lose much to
contention. The evidence, cheapest first:

- the experiment's first row, while it runs: it has been running ``wall`` seconds and
  on a CPU (or queued for one, which Linux's schedstat tells) ``cpu`` of them, so rows
  like it keep ``wall / cpu`` threads busy. A row waiting 5 ms with 50 us of CPU asks
  for 100 threads at once, with no doubling tick by tick;
- afterwards, while the first rows' threads spent under a tenth of their time on a CPU,
  the workers' CPU share per tick and the process's;
- otherwise rates: each doubling must raise the rate of finished rows by a quarter
  (rates, unlike CPU shares, tell I/O waits from GIL waits, even on a loaded machine).
"""

from __future__ import annotations

import asyncio
import logging
import math
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.evaluation._feed import RowFeed

log = logging.getLogger("assay.evaluation.threads")

_RAMP_TICK_S = 0.005
# During the first row's first 20 ms (and before it), the ramp looks every millisecond:
# a first row that waits shows it within one or two (its CPU stops rising), and every
# thread started a tick sooner starts its rows that much sooner (5 ms ticks cost the
# ramp ~8 ms of 200). A first row still computing after that is read every 5 ms, so
# that a long one is not made to hand the GIL to the ramp every millisecond.
_FIRST_TICK_S = 0.001
_FIRST_TICKS_FOR_S = 0.02
_MIN_WINDOW_S = 0.02
_RAMP_SWITCH_S = 0.0005
_GAIN = 1.25
_WAITING_SHARE = 0.5  # process CPU time under half the wall time: threads wait
_MIN_ROWS = 8
_MAX_WINDOW_S = 0.25
_WAITING_ROW = 0.1  # a row's thread on a CPU under a tenth of its wall time: it waits


class Load:
    """Finished rows and their mean wall time (recent rows count most), how much of
    their time the rows run by a lone thread spent on a CPU (no GIL to wait for), and
    the process's CPU time per tick. Updated without a lock: a lost update only nudges
    a heuristic."""

    _DECAY = 0.9

    def __init__(self) -> None:
        self.rows = 0
        self.threads = 1
        self.measuring = True  # False once the ramp has decided: rows stop timing themselves
        self.first_row: tuple[float, float, float | None] | None = None  # wall, CPU, queued
        self._first_row_tick = (0.0, 0.0)
        self._queued_in_rows = 0.0
        self._wall = 0.0
        self._weight = 0.0
        self._first_wall = 0.0
        self._first_cpu = 0.0
        self._tick = (time.perf_counter(), time.process_time(), time.thread_time())
        self._clocks: list[int] = []  # the workers' CPU clocks, where the OS has them
        self._workers_tick = time.perf_counter()
        self._last_cpu: dict[int, float] = {}  # each worker's CPU clock at the last tick
        self._first_clock: int | None = None
        self._first_stat: str | None = None  # the first worker's scheduler figures (Linux)
        self._first_state: str | None = None  # and its state (running, queued, sleeping)
        self._first_tick = (time.perf_counter(), 0.0)

    def worker_started(self) -> None:
        """Called by each worker thread, so that rows still running can be measured."""
        if hasattr(time, "pthread_getcpuclockid"):
            clock = time.pthread_getcpuclockid(threading.get_ident())
            if self._first_clock is None:
                self._first_clock = clock
            self._clocks.append(clock)
        if self._first_stat is None:
            task = f"/proc/self/task/{threading.get_native_id()}"
            self._first_stat, self._first_state = f"{task}/schedstat", f"{task}/stat"

    def first_row_started(self) -> None:
        """Called by the (only) worker as the experiment's first row starts."""
        queued = self._first_queued()  # first: reading it is not the row's CPU
        self.first_row = (time.perf_counter(), time.thread_time(), queued)
        self._first_row_tick = self.first_row[:2]

    def first_row_threads(self, max_threads: int) -> int | None:
        """While the first row runs: the threads rows like it keep busy, ``wall / cpu``
        of it so far or over the last tick, whichever is more (its first CPU is partly
        a cold start); None once it finished, or while it computes or the OS keeps it
        from a CPU (a runnable thread is not waiting)."""
        cpu = _cpu_of(self._first_clock)
        if self.first_row is None or self.rows or cpu is None:
            return None
        started, cpu_started, queued_started = self.first_row
        now, queued = time.perf_counter(), self._first_queued()
        ticked, cpu_ticked = self._first_row_tick
        self._first_row_tick = (now, cpu)
        wall, used = now - started, cpu - cpu_started
        if queued is not None and queued_started is not None:
            used += queued - queued_started
        if wall < _FIRST_TICK_S or used >= _WAITING_ROW * wall or self._first_runnable():
            return None
        return max(_useful(wall, used, max_threads), _useful(now - ticked, cpu - cpu_ticked, max_threads))

    def workers_wait(self, *, ask_the_os: bool) -> float | None:
        """The share of the time since the last call the worker threads were on a CPU,
        each, when it is under a tenth and the first one was not kept waiting for a CPU
        by the OS either (0 where the OS does not say: the process's share decides);
        None when they compute."""
        wall, used, live = time.perf_counter(), 0.0, 0
        for clock in list(self._clocks):
            cpu = _cpu_of(clock)
            if cpu is None:  # the thread ended (the feed ran out): its clock is gone
                self._clocks.remove(clock)
                continue
            used += cpu - self._last_cpu.get(clock, 0.0)  # a new worker: its CPU since it started
            self._last_cpu[clock] = cpu
            live += 1
        share = used / max((wall - self._workers_tick) * live, 1e-9)
        self._workers_tick = wall
        first_waits = self._first_waits(wall)  # read every tick: each share is of one tick
        if (live and share >= _WAITING_ROW) or (ask_the_os and not first_waits):
            return None
        return share if live else 0.0

    def _first_schedstat(self) -> tuple[int, int] | None:
        """The first worker's time on a CPU and its time waiting for one, in ns (Linux's
        schedstat, brought up to date when the thread leaves a CPU); None where the OS
        does not say."""
        try:
            with open(self._first_stat or "") as handle:
                on_cpu, queued = handle.read().split()[:2]
            return int(on_cpu), int(queued)
        except (OSError, ValueError):
            return None

    def _first_queued(self) -> float | None:
        stat = self._first_schedstat()
        return None if stat is None else stat[1] / 1e9

    def _first_waits(self, wall: float) -> bool:
        """On a loaded machine a computing thread may get no CPU for a whole tick: it
        is then runnable, not waiting, which schedstat tells apart."""
        stat = self._first_schedstat()
        if stat is None:
            return True
        busy = (stat[0] + stat[1]) / 1e9
        share = (busy - self._first_tick[1]) / max(wall - self._first_tick[0], 1e-9)
        self._first_tick = (wall, busy)
        return share < _WAITING_ROW and not self._first_runnable()

    def _first_runnable(self) -> bool:
        """The first worker is on a CPU or queued for one right now (task state R).
        schedstat adds a queued stretch only when it ends, so a computing thread kept
        off the CPUs for a whole tick (load 8 on two cores does it) shows neither CPU
        nor queueing; its state tells. A thread waiting for a reply or for the GIL
        sleeps (S); one waiting for the GIL is woken as the ramp's thread drops it to
        read this file. False where the OS does not say."""
        try:
            with open(self._first_state or "") as handle:
                return handle.read().rsplit(")", 1)[1].split()[0] == "R"
        except (OSError, IndexError):
            return False

    def add(self, wall: float, cpu: float) -> None:
        self._wall = self._wall * self._DECAY + wall
        self._weight = self._weight * self._DECAY + 1.0
        if self.threads == 1 or self.rows == 0:
            self._first_wall += wall
            self._first_cpu += cpu
        self.rows += 1

    @property
    def rows_wait(self) -> bool:
        """The first rows spent under a tenth of their time on a CPU, not counting
        their time queued for one: they wait for something outside the process (a
        model call, a sleep). A CPU-bound row on a machine so loaded that it gets a
        fiftieth of a core is queued for the rest."""
        return self._first_cpu < _WAITING_ROW * self._rows_wall()

    def _rows_wall(self) -> float:
        """The first rows' wall time less the time the lone first worker spent queued
        for a CPU during them (a loaded machine lends the thread less CPU: not waiting)."""
        if self.threads == 1:  # every measured row ran on the first worker
            self._queued_in_rows = self._first_worker_queued()
        return max(self._first_wall - self._queued_in_rows, self._first_cpu)

    def useful_threads(self, max_threads: int) -> int:
        """Rows whose threads are on a CPU a share ``b`` of their time keep at most
        ``1 / b`` threads busy under one GIL; more would only wait for it (``b`` of
        their wall time less their time queued: see ``_rows_wall``)."""
        if self._first_cpu <= 0:
            return max_threads
        wall = self._rows_wall()
        # A thread more only where it could raise the rate by a quarter (_GAIN): rows
        # that wait 5% of their time keep one thread busy, not two.
        return max(1, min(max_threads, math.ceil(wall / self._first_cpu - (_GAIN - 1))))

    def _first_worker_queued(self) -> float:
        """The first worker's time queued for a CPU since its first row started, in
        the share of that time its rows took (the rest went to storing them)."""
        queued = self._first_queued()
        if self.first_row is None or queued is None or self.first_row[2] is None:
            return 0.0
        elapsed = max(time.perf_counter() - self.first_row[0], 1e-9)
        return (queued - self.first_row[2]) * min(1.0, self._first_wall / elapsed)

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


_switch_lock = threading.Lock()
_switch_depth = 0
_switch_saved = 0.005


class QuickSwitches:
    """A shorter GIL switch interval while a ramp reads its evidence among few threads.

    A new thread must take the GIL before it runs its first row; with busy threads
    around, that waits for a forced switch (5 ms by default), so starting 128 threads
    took ~0.4 s here and ~0.04 s at 0.5 ms; and the ramp's own ticks wait for rows that
    compute. Ended (``end``) as the ramp goes past a few threads, which it does only
    for rows that wait: a thread then gets the GIL as soon as a row lets it go for its
    wait, and each thread waiting for the GIL wakes once an interval to look (256
    threads at 0.5 ms: up to ~500,000 wake-ups a second on the GIL's one mutex; a ramp
    to 256 threads made ~20% more context switches and took 9-13% more CPU a row with it).
    The interval is restored when the last ramp ends it (experiments may overlap).
    """

    def __init__(self) -> None:
        self._on = False

    def __enter__(self) -> QuickSwitches:
        global _switch_depth, _switch_saved
        with _switch_lock:
            if _switch_depth == 0:
                _switch_saved = sys.getswitchinterval()
                sys.setswitchinterval(min(_switch_saved, _RAMP_SWITCH_S))
            _switch_depth += 1
        self._on = True
        return self

    def end(self) -> None:
        """Back to the interval from before (unless another ramp still runs); once."""
        global _switch_depth
        if not self._on:
            return
        self._on = False
        with _switch_lock:
            _switch_depth -= 1
            if _switch_depth == 0:
                sys.setswitchinterval(_switch_saved)

    def __exit__(self, *exc: object) -> None:
        self.end()


async def ramp(
    tasks: list[asyncio.Future[Any]],
    grow: Callable[[int], None],
    load: Load,
    feed: RowFeed,
    max_threads: int,
) -> None:
    """Add threads (``grow(n)``: n threads in all) while the evidence says they help;
    see the module docstring. The rate test's first rate, the baseline, is measured
    over one row's time (the threads are all busy by then); each later one over twice
    that, so that rows started after the doubling count."""
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
        _grow(grow, tasks, min(2 * len(tasks), limit), "the rate of finished rows rose")


async def _while_waiting(
    tasks: list[asyncio.Future[Any]],
    grow: Callable[[int], None],
    load: Load,
    feed: RowFeed,
    max_threads: int,
) -> bool:
    """Grow every tick while the first row waits, or while the workers and the process
    mostly wait (before any row finished, or while the first rows waited); False when a
    worker ended (the feed is done). The workers' own CPU clocks tell a row that
    computes on a loaded machine (its thread gets a third of a core: the process looks
    idle) from one that waits."""
    load.workers_wait(ask_the_os=False)  # the start of the first tick
    while len(tasks) < max_threads and not feed.exhausted and (load.rows == 0 or load.rows_wait):
        done, _ = await asyncio.wait(tasks, timeout=_tick(load), return_when=asyncio.FIRST_COMPLETED)
        if done:
            return False
        if load.first_row is None:
            # No row has begun (the first worker is not scheduled yet): an idle process
            # is not a waiting one. The shares' next tick starts now.
            load.workers_wait(ask_the_os=False)
            load.computing_share()
            continue
        first_row = load.first_row_threads(max_threads)
        # Before a row finished, ask the OS too: a computing first row may get no CPU
        # for a whole tick. Afterwards a waking thread's wait for a CPU would count.
        share = load.workers_wait(ask_the_os=load.rows == 0)
        process_waits = load.computing_share() < _WAITING_SHARE
        # rows may have finished during the tick: their evidence first
        rows_wait = load.rows == 0 or load.rows_wait
        if first_row is not None and first_row > len(tasks):
            _grow(grow, tasks, first_row, "the first row waits")
        elif share is not None and process_waits and rows_wait:
            _grow(grow, tasks, threads_for(len(tasks), share, max_threads), "the workers wait")
        elif load.rows:
            break  # threads or the process compute most of the time now: let the rates say
    return True


def _tick(load: Load) -> float:
    """How long the ramp waits before it reads the evidence again."""
    if load.rows or (
        load.first_row is not None and time.perf_counter() - load.first_row[0] > _FIRST_TICKS_FOR_S
    ):
        return _RAMP_TICK_S
    return _FIRST_TICK_S


def _cpu_of(clock: int | None) -> float | None:
    """A thread's CPU time by its clock; None once the thread has ended."""
    if clock is None:
        return None
    try:
        return time.clock_gettime(clock)
    except OSError:
        return None


def _useful(wall: float, cpu: float, max_threads: int) -> int:
    """Threads that rows on a CPU ``cpu`` of every ``wall`` seconds keep busy under one GIL."""
    return max_threads if cpu * max_threads <= wall else max(1, min(max_threads, math.ceil(wall / cpu)))


def threads_for(threads: int, share: float, max_threads: int) -> int:
    """How many threads rows that have been on a CPU ``share`` of their time keep busy
    under one GIL (``1 / share``), at least twice those running."""
    useful = max_threads if share * max_threads <= 1 else math.ceil(1 / share)
    return min(max_threads, max(2 * threads, useful))


def _grow(grow: Callable[[int], None], tasks: list[Any], count: int, why: str) -> None:
    before = len(tasks)
    grow(count)
    log.debug("row threads: %d -> %d (%s)", before, len(tasks), why)


async def _finished_rate(
    tasks: list[asyncio.Future[Any]], load: Load, window: float, per_thread: int
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
