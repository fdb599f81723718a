"""Experiment overhead: N trivial rows, two row evaluators, one summary evaluator, all stored.

    .venv/bin/python bench/core_throughput.py [N] [--repeat R]

Each round evaluates N examples of a stored dataset into a SQLite file (dataset import
excluded) and checks every row was stored. Prints each round, then the median and best
examples per second and the peak RSS. This virtual machine's speed moves by up to ±25%
between runs, hence several rounds.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from pathlib import Path

from assay import Client, evaluate


def target(inputs: dict) -> dict:
    return {"answer": inputs["x"] * 2}


def doubled(outputs: dict, reference_outputs: dict) -> bool:
    return outputs["answer"] == reference_outputs["answer"]


def positive(outputs: dict) -> float:
    return 1.0 if outputs["answer"] >= 0 else 0.0


def accuracy(outputs: list, reference_outputs: list) -> float:
    return sum(o["answer"] == r["answer"] for o, r in zip(outputs, reference_outputs)) / len(outputs)


def children_cpu() -> float:
    """CPU seconds of this process's ended children: the runs' SQLite writer processes."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_round(n: int, folder: Path, index: int) -> tuple[float, float, float]:
    """Returns examples per second and CPU microseconds per example: this process's (all
    threads) and its writer process's."""
    client = Client(str(folder / f"bench-{index}.db"))
    client.create_dataset("bench")
    client.create_examples(
        inputs=[{"x": i} for i in range(n)],
        outputs=[{"answer": 2 * i} for i in range(n)],
        dataset_name="bench",
    )
    started, cpu, writer = time.perf_counter(), time.process_time(), children_cpu()
    results = evaluate(
        target,
        data="bench",
        evaluators=[doubled, positive],
        summary_evaluators=[accuracy],
        client=client,
        progress=False,
    )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    writer = children_cpu() - writer
    assert len(client.read_experiment(results.experiment_name)) == n
    assert results.summary_results.results[0].score == 1.0
    client.close()
    return n / elapsed, cpu / n * 1e6, writer / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int, nargs="?", default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rates, cpus, writers = [], [], []
    with tempfile.TemporaryDirectory() as folder:
        for index in range(args.repeat):
            rate, cpu_us, writer_us = one_round(args.n, Path(folder), index)
            rates.append(rate)
            cpus.append(cpu_us)
            writers.append(writer_us)
            print(
                f"round {index + 1}: {rate:,.0f} examples/s, {cpu_us:.0f} us of CPU per example "
                f"(+{writer_us:.0f} in the writer process)"
            )
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"rows={args.n} median={statistics.median(rates):,.0f} best={max(rates):,.0f} "
        f"examples_per_second cpu_us_per_example={statistics.median(cpus):.0f} "
        f"writer_process_us_per_example={statistics.median(writers):.0f} "
        f"peak_rss_mb={peak_mb:.0f}"
    )


if __name__ == "__main__":
    main()
