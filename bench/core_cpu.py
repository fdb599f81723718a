"""CPU time of the user's path, by process: what a loaded machine's wall time hides.

    .venv/bin/python bench/core_cpu.py [N] [--rounds R] [--before PYTHON]

The core benchmark's script (``bench/core_throughput.py``: inline data, ``evaluate`` with
two row evaluators and a summary evaluator, ``list(results)``), timed by CPU clocks: the
run's process (``time.process_time``) and its SQLite writer process (the rusage of the
ended children, once its metric columns are built). Each side in its own process,
alternating round by round; with ``--before``, an earlier checkout's assay as another
interpreter has it.
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _rounds import alternate, arguments, compile_bytecode, run_round
from core_throughput import evaluate_inline, inline_data


def child(n: int, folder: str) -> dict[str, Any]:
    from assay import Client
    from assay.store.sqlite import _writer_process

    client = Client(str(Path(folder) / "cpu.db"))
    data = inline_data(n)
    wall, cpu = time.perf_counter(), time.process_time()
    results = evaluate_inline(data, client)
    assert len(list(results)) == n and results.summary_results.results[0].score == 1.0
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    client.close()
    _writer_process._wait_for_builders(None)  # the writer process has ended: its rusage is in
    writer = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "wall": wall,
        "main": cpu,
        "writer": writer.ru_utime + writer.ru_stime,
        "load": os.getloadavg()[0],
    }


def main() -> None:
    args = arguments(child, n=10_000, rounds=4, before="PYTHON interpreter has it")
    if args is None:
        return
    sides = {"assay": sys.executable, **({"before": args.before} if args.before else {})}
    for python in sides.values():
        compile_bytecode(python)

    def report(round_: int, side: str, got: dict[str, Any]) -> None:
        print(
            f"  round {round_ + 1} {side:>6}: wall {got['wall']:.2f} s, run's process {got['main']:.2f} s "
            f"CPU, writer process {got['writer']:.2f} s CPU (load average {got['load']:.1f})",
            flush=True,
        )

    figures = alternate(
        sides, args.rounds, lambda side: run_round(__file__, [str(args.n)], python=sides[side]), report
    )
    print(f"\n{args.n:,} rows, median of {args.rounds} rounds (CPU seconds)")
    for side in sides:
        main_cpu = statistics.median(f["main"] for f in figures[side])
        writer_cpu = statistics.median(f["writer"] for f in figures[side])
        print(f"{side:>8}: run's process {main_cpu:.3f} s, writer process {writer_cpu:.3f} s")


if __name__ == "__main__":
    main()
