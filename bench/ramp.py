"""The ramp of latency-bound rows, with where its fixed cost goes, against an earlier checkout.

    .venv/bin/python bench/ramp.py [N] [--rounds R] [--before SRC]

Each round, in a fresh process per side (alternating; ``--before SRC`` runs an earlier
checkout's ``src`` folder as ``PYTHONPATH``): N stored examples (1,024 by default), then
``evaluate`` of a target that sleeps 50 ms (a model call), one evaluator, at
``max_concurrency=256``: the ideal is ``ceil(N / 256)`` waves of 50 ms. Printed per side,
median over the rounds: the share of the ideal rate, the CPU per row of the run's process,
and the phases of the call in ms since it started: the first row's start, the 256th row's
start (the ramp), the last row's end (the waves), the rows' writer closed (``stored``: the
last batch committed) and the call's return (the lease's end, the results; and, as the
median of each round's difference, ``after stored``), and the run's context switches
(``getrusage``: every thread's, the ended ones' too; fewer hand-offs, and a figure the
load moves less than the phases). The load average is printed with them: on a loaded
machine the phases stretch, so compare the sides of one run.

The ``floor`` side, in the same rounds, is the same rows without assay: 256 threads
started at the call as assay starts its row threads (``_thread.start_new_thread``), taking
rows under a lock, each calling the same target and evaluator. What it reaches is what
Python's threads give on this machine with no framework at all (its ``stored`` is its last
row's end: it stores nothing): no code of ours can do better.
"""

from __future__ import annotations

import _thread
import math
import os
import resource
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from _rounds import alternate, arguments, compile_bytecode, run_round

WAIT_S, THREADS = 0.05, 256
PHASES = ("first row", "ramp done", "last row end", "stored", "end")
AFTER = "after stored"  # the end less the rows' writer closed, per round: the lease's end, the results
FIGURES = ("share", "cpu_us", *PHASES, AFTER, "switches")


def context_switches() -> int:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_nvcsw + usage.ru_nivcsw


def closing_times(closed: list[float]) -> None:
    """Note when each of the run's row writers returns from ``close`` (its last batch in)."""
    from assay.evaluation._writer import RowWriter

    close = RowWriter.close

    def noted(self: RowWriter, **kwargs: Any) -> Any:
        try:
            return close(self, **kwargs)
        finally:
            closed.append(time.perf_counter())

    RowWriter.close = noted  # type: ignore[method-assign]


FLOOR = "ASSAY_RAMP_FLOOR"  # set in a round's environment: the floor side


class Calls:
    """The target (a model call of 50 ms) and the evaluator both sides run, noting when
    each call starts and ends."""

    def __init__(self) -> None:
        self.starts: list[float] = []
        self.ends: list[float] = []

    def model_call(self, inputs: dict[str, Any]) -> dict[str, Any]:
        self.starts.append(time.perf_counter())  # list.append is atomic: no lock needed
        time.sleep(WAIT_S)
        self.ends.append(time.perf_counter())
        return {"answer": inputs["x"] * 2}

    @staticmethod
    def positive(outputs: dict[str, Any]) -> float:
        return 1.0


def child(n: int, folder: str) -> dict[str, Any]:
    return floor_round(n) if os.environ.get(FLOOR) else assay_round(n, folder)


def floor_round(n: int) -> dict[str, Any]:
    """The rows on bare threads: no store, no records, no tally."""
    calls, feed, taking, done = Calls(), iter(range(n)), threading.Lock(), threading.Semaphore(0)

    def worker() -> None:
        while True:
            with taking:
                x = next(feed, None)
            if x is None:
                break
            calls.positive(calls.model_call({"x": x}))
        done.release()

    switches = context_switches()
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(THREADS):
        _thread.start_new_thread(worker, ())
    for _ in range(THREADS):
        done.acquire()
    ended, cpu = time.perf_counter(), time.process_time() - cpu
    return figures_of(n, calls, started, max(calls.ends), ended, cpu, context_switches() - switches)


def figures_of(
    n: int, calls: Calls, started: float, stored: float, ended: float, cpu: float, switches: int
) -> dict[str, Any]:
    starts = sorted(calls.starts)
    ideal = math.ceil(n / THREADS) * WAIT_S
    phases = (starts[0], starts[min(THREADS, n) - 1], max(calls.ends), stored, ended)
    return {
        "share": ideal / (ended - started),
        "cpu_us": cpu / n * 1e6,
        **{name: (at - started) * 1e3 for name, at in zip(PHASES, phases)},
        AFTER: (ended - stored) * 1e3,
        "switches": switches,
        "load": os.getloadavg()[0],
    }


def assay_round(n: int, folder: str) -> dict[str, Any]:
    from assay import Client, evaluate

    calls = Calls()
    closed: list[float] = []
    closing_times(closed)

    client = Client(str(Path(folder) / "ramp.db"))
    client.create_dataset("ramp")
    client.create_examples(inputs=[{"x": i} for i in range(n)], dataset_name="ramp")
    switches = context_switches()
    started, cpu = time.perf_counter(), time.process_time()
    # kept, as a script keeps what evaluate returns to read it: a discarded result would be
    # freed inside the timing (its 1,024 rows: 2-4 ms at load 5), which no user waits for
    results = evaluate(
        calls.model_call,
        data="ramp",
        evaluators=[calls.positive],
        client=client,
        max_concurrency=THREADS,
        progress=False,
    )
    ended, cpu = time.perf_counter(), time.process_time() - cpu
    del results
    return figures_of(n, calls, started, closed[-1], ended, cpu, context_switches() - switches)


def main() -> None:
    args = arguments(child, n=1_024, rounds=5, before="SRC folder has it")
    if args is None:
        return
    sides = ["assay", *(["before"] if args.before else []), "floor"]
    environments: dict[str, dict[str, str] | None] = {"assay": None, "floor": {**os.environ, FLOOR: "1"}}
    if args.before:
        environments["before"] = {**os.environ, "PYTHONPATH": args.before}
    for side in sides[:-1]:
        compile_bytecode(env=environments[side])

    def measure(side: str) -> dict[str, Any]:
        return run_round(__file__, [str(args.n)], python=sys.executable, env=environments[side])

    def report(round_: int, side: str, got: dict[str, Any]) -> None:
        print(
            f"  round {round_ + 1} {side}: {got['share']:.0%} of ideal, {got['switches']} switches,"
            f" load {got['load']:.1f}",
            flush=True,
        )

    figures = alternate(sides, args.rounds, measure, report)
    loads = [f["load"] for side in sides for f in figures[side]]
    print(
        f"\n{args.n:,} rows of {WAIT_S * 1e3:.0f} ms at max_concurrency={THREADS}, median of {args.rounds} rounds,"
    )
    print(f"load average {min(loads):.1f}-{max(loads):.1f}; phases in ms since evaluate() was called")
    print(
        f"{'side':>8} {'of ideal':>9} {'CPU us/row':>11} "
        + " ".join(f"{p:>13}" for p in (*PHASES, AFTER))
        + f" {'switches':>9}"
    )
    for side in sides:
        median = {key: statistics.median(f[key] for f in figures[side]) for key in FIGURES}
        print(
            f"{side:>8} {median['share']:9.0%} {median['cpu_us']:11.0f} "
            + " ".join(f"{median[p]:13.1f}" for p in (*PHASES, AFTER))
            + f" {median['switches']:9.0f}"
        )


if __name__ == "__main__":
    main()
