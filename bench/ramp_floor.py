"""The floor of the ramp's workload without assay: bare threads under one GIL.

    .venv/bin/python bench/ramp_floor.py [--rows N] [--threads T] [--rounds R]

256 threads (started at once, as the ramp does once rows wait) share 1,024 rows; a row
computes ``c`` µs, sleeps 50 ms (the model call), computes ``c`` µs more. Printed for
each ``c`` (0, 25, 50, 100 µs a row): when the last row ends against the ideal, ``ceil(N
/ T)`` waves of 50 ms. What a row's CPU costs the waves here, with no store, no writer and
no ramp, is what assay's rows pay on top of theirs: the threads woken together queue for
the GIL.

Then, at 50 µs a row, one hand-off at a time as assay had it and as it has it now,
alternating round by round (medians of R rounds): the rows taken under one lock that is
also held while the next page of examples is read (0.3 ms without the GIL every 128
rows), against a queue planned ahead (popleft without a lock, the next page read by one
thread while the others go on); and each thread's end handed to an event loop one by
one (``call_soon_threadsafe`` each), against one hand-over for the first and the last.

Last, what a row's kind of work (small dicts, a UUID: ~60 µs) costs in CPU back to back
on one thread, on 256 threads that each wait 50 ms between two halves of it, and on 4
such threads: how much of a waiting row's CPU is its waking up rather than contention.
"""

from __future__ import annotations

import _thread
import argparse
import asyncio
import math
import os
import statistics
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any

WAIT_S = 0.05


def spin(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def last_row_end(rows: int, threads: int, cpu_s: float) -> float:
    """Seconds from the first thread's start to the last row's end."""
    planned = iter(range(rows))
    lock, ended = threading.Lock(), threading.Semaphore(0)
    ends: list[float] = []

    def worker() -> None:
        while True:
            with lock:
                row = next(planned, None)
            if row is None:
                break
            spin(cpu_s / 2)
            time.sleep(WAIT_S)
            spin(cpu_s / 2)
            ends.append(time.perf_counter())  # list.append is atomic
        ended.release()

    started = time.perf_counter()
    for _ in range(threads):
        _thread.start_new_thread(worker, ())
    for _ in range(threads):
        ended.acquire()
    return max(ends) - started


PAGE, PAGE_READ_S = 128, 0.0003


class LockedFeed:
    """Rows under one lock, held while a page is read (the GIL is let go meanwhile)."""

    def __init__(self, rows: int) -> None:
        self._rows, self._lock, self._next = rows, threading.Lock(), 0

    def next(self) -> int | None:
        with self._lock:
            if self._next >= self._rows:
                return None
            if self._next % PAGE == 0:
                time.sleep(PAGE_READ_S)
            self._next += 1
            return self._next - 1


class QueuedFeed:
    """Rows popped from a queue; the thread finding it low reads the next page, alone."""

    def __init__(self, rows: int) -> None:
        self._rows, self._planned, self._ready = rows, 0, deque[int]()
        self._planning = threading.Lock()

    def next(self) -> int | None:
        if len(self._ready) <= PAGE and self._planned < self._rows and self._planning.acquire(False):
            try:
                self._plan()
            finally:
                self._planning.release()
        try:
            return self._ready.popleft()
        except IndexError:
            with self._planning:
                while not self._ready and self._planned < self._rows:
                    self._plan()
                return self._ready.popleft() if self._ready else None

    def _plan(self) -> None:
        time.sleep(PAGE_READ_S)
        more = range(self._planned, min(self._rows, self._planned + PAGE))
        self._ready.extend(more)
        self._planned += len(more)


def handed_over(rows: int, threads: int, cpu_s: float, feed: Callable[[int], Any], one_by_one: bool) -> float:
    """Seconds from the first thread's start to the last row's end, each thread's end
    settling a future on a running event loop, one by one or first-and-last only."""
    taken = feed(rows)
    ends: list[float] = []

    async def run() -> float:
        loop = asyncio.get_running_loop()
        futures = [loop.create_future() for _ in range(threads)]
        left = [threads]
        lock = threading.Lock()

        ended: deque[asyncio.Future[None]] = deque()

        def settle_ended() -> None:
            while ended:
                ended.popleft().set_result(None)

        def worker(future: asyncio.Future[None]) -> None:
            while taken.next() is not None:
                spin(cpu_s / 2)
                time.sleep(WAIT_S)
                spin(cpu_s / 2)
                ends.append(time.perf_counter())
            if one_by_one:
                loop.call_soon_threadsafe(future.set_result, None)
                return
            ended.append(future)
            with lock:
                left[0] -= 1
                first, last = left[0] == threads - 1, left[0] == 0
            if first or last:
                loop.call_soon_threadsafe(settle_ended)

        started = time.perf_counter()
        for future in futures:
            _thread.start_new_thread(worker, (future,))
        await asyncio.gather(*futures)
        return started

    started = asyncio.run(run())
    return max(ends) - started


def row_work(i: int) -> list[dict[str, Any]]:
    """A row's kind of work: small dicts, a UUID, a clock (~30 µs a half)."""
    fields = {"inputs": {"x": i}, "outputs": {"answer": i * 2}, "id": uuid.UUID(int=i), "t": time.time()}
    return [{"k": k, "v": str(k), "fields": fields} for k in range(60)]


def cpu_a_row(rows: int, threads: int, wait_s: float) -> float:
    """The process's CPU per row, in µs: ``threads`` share ``rows`` rows, each row
    doing ``row_work`` twice around a wait of ``wait_s``."""
    planned, lock, ended, kept = iter(range(rows)), threading.Lock(), threading.Semaphore(0), []

    def worker() -> None:
        while True:
            with lock:
                row = next(planned, None)
            if row is None:
                break
            kept.append(row_work(row))
            if wait_s:
                time.sleep(wait_s)
            kept.append(row_work(row))
        ended.release()

    cpu = time.process_time()
    for _ in range(threads):
        _thread.start_new_thread(worker, ())
    for _ in range(threads):
        ended.acquire()
    return (time.process_time() - cpu) / rows * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_024)
    parser.add_argument("--threads", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    ideal = math.ceil(args.rows / args.threads) * WAIT_S
    print(
        f"{args.rows:,} rows, {args.threads} threads, ideal {ideal * 1e3:.0f} ms, load {os.getloadavg()[0]:.1f}"
    )
    for cpu_us in (0, 25, 50, 100):
        took = last_row_end(args.rows, args.threads, cpu_us / 1e6)
        print(
            f"  {cpu_us:4d} µs of CPU a row: last row ends at {took * 1e3:6.1f} ms ({ideal / took:.0%} of ideal)"
        )
    sides: dict[str, tuple[Callable[[int], Any], bool]] = {
        "feed under one lock, ends one by one": (LockedFeed, True),
        "feed under one lock, ends first+last": (LockedFeed, False),
        "queued feed, ends one by one": (QueuedFeed, True),
        "queued feed, ends first+last": (QueuedFeed, False),
    }
    took_ms: dict[str, list[float]] = {side: [] for side in sides}
    for round_ in range(args.rounds):
        for side in list(sides) if round_ % 2 == 0 else list(sides)[::-1]:
            feed, one_by_one = sides[side]
            took_ms[side].append(handed_over(args.rows, args.threads, 50e-6, feed, one_by_one) * 1e3)
    print(f"at 50 µs a row, medians of {args.rounds} alternating rounds (load {os.getloadavg()[0]:.1f}):")
    for side, took in took_ms.items():
        print(
            f"  {side:38s} last row ends at {statistics.median(took):6.1f} ms ({min(took):.1f}-{max(took):.1f})"
        )
    shapes = {"1 thread, no wait": (1, 1_024, 0.0), "256 threads, 50 ms waits": (256, 1_024, WAIT_S)}
    shapes["4 threads, 50 ms waits"] = (4, 64, WAIT_S)
    cpu_us: dict[str, list[float]] = {shape: [] for shape in shapes}
    for _ in range(3):
        for shape, (threads, rows, wait_s) in shapes.items():
            cpu_us[shape].append(cpu_a_row(rows, threads, wait_s))
    print("a row's kind of work (small dicts, a UUID), the process's CPU a row, medians of 3:")
    for shape, figures in cpu_us.items():
        print(f"  {shape:26s} {statistics.median(figures):5.0f} µs")


if __name__ == "__main__":
    main()
