"""The floor of the ramp's workload without assay: bare threads under one GIL.

    .venv/bin/python bench/ramp_floor.py [--rows N] [--threads T]

256 threads (started at once, as the ramp does once rows wait) share 1,024 rows; a row
computes ``c`` µs, sleeps 50 ms (the model call), computes ``c`` µs more. Printed for
each ``c`` (0, 25, 50, 100 µs a row): when the last row ends against the ideal, ``ceil(N
/ T)`` waves of 50 ms. What a row's CPU costs the waves here, with no store, no writer and
no ramp, is what assay's rows pay on top of theirs: the threads woken together queue for
the GIL.
"""

from __future__ import annotations

import _thread
import argparse
import math
import os
import threading
import time

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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_024)
    parser.add_argument("--threads", type=int, default=256)
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


if __name__ == "__main__":
    main()
