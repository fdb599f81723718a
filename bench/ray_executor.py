"""The Ray executor's cost and reach, on a real local cluster started here.

    .venv/bin/python bench/ray_executor.py [--rows N] [--repeat R] [--nodes K] [--cpus C]
                                           [--skip-humaneval]

1. The core benchmark's workload (bench/core_throughput.py: N trivial rows, two row
   evaluators, one summary evaluator, all stored in SQLite): rows per second with the
   local executor, then through Ray (K node processes of C CPUs each on this machine),
   with the default batch sizing and with fixed batch sizes, to show the per-row overhead.
2. HumanEval (the 164 canonical solutions, test-program mode, in the real sandbox)
   through Ray with K nodes, against the local executor: problems per second, and every
   canonical solution must pass either way.

Starts its own cluster (``assay.testing.ray_cluster``) and stops exactly its processes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import core_throughput  # noqa: E402
import humaneval  # noqa: E402

from assay import Client, evaluate  # noqa: E402
from assay.evaluators import CodeCorrectnessEvaluator  # noqa: E402
from assay.executors import RayExecutor  # noqa: E402
from assay.testing.ray_cluster import LocalCluster  # noqa: E402


def core_round(folder: Path, n: int, index: int, executor: Any) -> tuple[float, float]:
    """Rows per second, and this process's (the driver's) CPU microseconds per row."""
    client = Client(str(folder / f"core-{index}.db"))
    client.create_dataset("bench")
    client.create_examples(
        inputs=[{"x": i} for i in range(n)],
        outputs=[{"answer": 2 * i} for i in range(n)],
        dataset_name="bench",
    )
    started, cpu = time.perf_counter(), time.process_time()
    results = evaluate(
        core_throughput.target,
        data="bench",
        evaluators=[core_throughput.doubled, core_throughput.positive],
        summary_evaluators=[core_throughput.accuracy],
        client=client,
        progress=False,
        executor=executor,
    )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert len(client.read_experiment(results.experiment_name)) == n
    assert results.summary_results.results[0].score == 1.0
    client.close()
    return n / elapsed, cpu / n * 1e6


def core(folder: Path, n: int, repeat: int, address: str) -> None:
    print(f"core workload, {n:,} rows, median of {repeat}:")
    configurations: list[tuple[str, Any]] = [("local executor", None)]
    configurations.append(("ray, adaptive batches", RayExecutor(address=address)))
    for fixed in (64, 4096):  # batch_seconds so large that the row cap decides
        executor = RayExecutor(address=address, batch_seconds=1e6, max_batch_rows=fixed)
        configurations.append((f"ray, batches of {fixed}", executor))
    index = 0
    for label, executor in configurations:
        if executor is not None:
            core_round(folder, 200, index, executor)  # start the workers: not timed
            index += 1
        rates, cpus = [], []
        for _ in range(repeat):
            rate, cpu_us = core_round(folder, n, index, executor)
            rates.append(rate)
            cpus.append(cpu_us)
            index += 1
        print(
            f"  {label:24s} median={statistics.median(rates):8,.0f} best={max(rates):8,.0f} rows/s, "
            f"driver CPU {statistics.median(cpus):5.0f} us/row"
        )
        if executor is not None:
            executor.shutdown()


def humaneval_rate(folder: Path, address: str, workers: int) -> None:
    problems = humaneval.load_problems()
    client = Client(str(folder / "humaneval.db"))
    client.create_dataset("humaneval")
    client.create_examples(
        inputs=[{**humaneval.example_of(p).inputs, "answer": p["canonical_solution"]} for p in problems],
        dataset_name="humaneval",
    )
    evaluator = CodeCorrectnessEvaluator(execution_timeout=10)
    print(f"HumanEval, {len(problems)} canonical solutions, {workers} rows at once:")
    for label, executor in (("local executor", None), ("ray", RayExecutor(address=address))):
        if executor is not None:  # warm the workers' sandbox pools, as a big run would be
            evaluate(
                _completion,
                data="humaneval",
                evaluators=[evaluator],
                client=client,
                progress=False,
                executor=executor,
                max_concurrency=workers,
            )
        started = time.perf_counter()
        results = evaluate(
            _completion,
            data="humaneval",
            evaluators=[evaluator],
            client=client,
            progress=False,
            executor=executor,
            max_concurrency=workers,
        )
        elapsed = time.perf_counter() - started
        passed = results.aggregate[evaluator.name].mean
        print(f"  {label:24s} {len(problems) / elapsed:6.1f} problems/s, pass rate {passed:.3f}")
        if executor is not None:
            executor.shutdown()


def _completion(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"text": inputs["answer"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--cpus", type=int, default=1)
    parser.add_argument("--skip-humaneval", action="store_true")
    args = parser.parse_args()
    cluster = LocalCluster(nodes=args.nodes, cpus=args.cpus)
    print(f"starting a local Ray cluster: {args.nodes} nodes x {args.cpus} CPUs")
    cluster.start()
    try:
        import ray

        ray.init(address=cluster.address, logging_level="WARNING", log_to_driver=False)
        with tempfile.TemporaryDirectory() as folder:
            core(Path(folder), args.rows, args.repeat, cluster.address)
            if not args.skip_humaneval:
                humaneval_rate(Path(folder), cluster.address, 2 * args.nodes * args.cpus)
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
