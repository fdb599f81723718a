"""Experiment overhead: N trivial rows, two row evaluators, one summary evaluator, all stored.

    .venv/bin/python bench/core_throughput.py [N]

Prints examples per second end to end (dataset import excluded) and the peak RSS.
"""

from __future__ import annotations

import resource
import sys
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


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as folder:
        client = Client(str(Path(folder) / "bench.db"))
        client.create_dataset("bench")
        client.create_examples(
            inputs=[{"x": i} for i in range(n)], outputs=[{"answer": 2 * i} for i in range(n)],
            dataset_name="bench",
        )
        started = time.perf_counter()
        results = evaluate(
            target, data="bench", evaluators=[doubled, positive], summary_evaluators=[accuracy],
            client=client, progress=False,
        )
        elapsed = time.perf_counter() - started
        stored = len(client.read_experiment(results.experiment_name))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert stored == n and results.summary_results.results[0].score == 1.0
    print(f"rows={n} seconds={elapsed:.3f} examples_per_second={n / elapsed:,.0f} peak_rss_mb={peak_mb:.0f}")


if __name__ == "__main__":
    main()
