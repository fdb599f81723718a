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
"""

from __future__ import annotations

import math
import os
import resource
import statistics
import sys
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


def child(n: int, folder: str) -> dict[str, Any]:
    from assay import Client, evaluate

    starts: list[float] = []
    ends: list[float] = []
    closed: list[float] = []
    closing_times(closed)

    def model_call(inputs: dict[str, Any]) -> dict[str, Any]:
        starts.append(time.perf_counter())  # list.append is atomic: no lock needed
        time.sleep(WAIT_S)
        ends.append(time.perf_counter())
        return {"answer": inputs["x"] * 2}

    def positive(outputs: dict[str, Any]) -> float:
        return 1.0

    client = Client(str(Path(folder) / "ramp.db"))
    client.create_dataset("ramp")
    client.create_examples(inputs=[{"x": i} for i in range(n)], dataset_name="ramp")
    switches = context_switches()
    started, cpu = time.perf_counter(), time.process_time()
    # kept, as a script keeps what evaluate returns to read it: a discarded result would be
    # freed inside the timing (its 1,024 rows: 2-4 ms at load 5), which no user waits for
    results = evaluate(
        model_call, data="ramp", evaluators=[positive], client=client, max_concurrency=THREADS, progress=False
    )
    ended, cpu = time.perf_counter(), time.process_time() - cpu
    del results
    switches = context_switches() - switches
    starts.sort()
    ideal = math.ceil(n / THREADS) * WAIT_S
    phases = (starts[0], starts[min(THREADS, n) - 1], max(ends), closed[-1], ended)
    return {
        "share": ideal / (ended - started),
        "cpu_us": cpu / n * 1e6,
        **{name: (at - started) * 1e3 for name, at in zip(PHASES, phases)},
        AFTER: (ended - closed[-1]) * 1e3,
        "switches": switches,
        "load": os.getloadavg()[0],
    }


def main() -> None:
    args = arguments(child, n=1_024, rounds=5, before="SRC folder has it")
    if args is None:
        return
    sides = ["assay", *(["before"] if args.before else [])]
    environments = {
        side: {**os.environ, "PYTHONPATH": args.before} if side == "before" else None for side in sides
    }
    for env in environments.values():
        compile_bytecode(env=env)

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
