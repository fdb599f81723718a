"""Sharded runs on one machine: one process against N concurrent `--shard` processes on one
SQLite file, for rows that compute (trivial target) and rows that wait (a model call).

    .venv/bin/python bench/shards.py                     # 10,000 trivial rows, 4,000 waiting rows
    .venv/bin/python bench/shards.py --rows 20000 --shards 3 --wait-ms 20

Each figure is the wall time of whole `evaluate` processes (start-up included, as a CI job
sees it) and the rows per second it makes; every run's stored rows are counted, and the
sharded experiment must be complete with as many rows as the whole one.
"""

from __future__ import annotations

import argparse
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import sys, time
from assay import Client, evaluate
db, name, shard, count, rows, wait = sys.argv[1:7]
wait_s = float(wait) / 1000

def target(inputs):
    if wait_s:
        time.sleep(wait_s)
    return {"answer": inputs["x"] * 2}

def doubled(outputs, reference_outputs):
    return outputs["answer"] == reference_outputs["answer"]

def accuracy(outputs, reference_outputs):
    return sum(o["answer"] == r["answer"] for o, r in zip(outputs, reference_outputs)) / len(outputs)

data = [{"inputs": {"x": i}, "outputs": {"answer": 2 * i}} for i in range(int(rows))]
sharding = None if int(count) == 1 else (int(shard), int(count))
evaluate(target, data=data, evaluators=[doubled], summary_evaluators=[accuracy], experiment=name,
         client=Client(db), shard=sharding, max_concurrency=64, progress=False)
"""


def timed(db: Path, name: str, shards: int, rows: int, wait_ms: float) -> float:
    started = time.perf_counter()
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(db), name, str(i), str(shards), str(rows), str(wait_ms)],
            stderr=subprocess.DEVNULL,
        )
        for i in range(shards)
    ]
    codes = [process.wait() for process in processes]
    elapsed = time.perf_counter() - started
    assert codes == [0] * shards, codes
    with sqlite3.connect(db) as conn:
        stored, status = conn.execute(
            "SELECT COUNT(*), e.status FROM runs u JOIN experiments e ON e.id = u.experiment_id WHERE e.name = ?",
            (name,),
        ).fetchone()
    assert stored == rows and status == "completed", (stored, status)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--waiting-rows", type=int, default=4_000)
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--wait-ms", type=float, default=50.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "bench.db"
        timed(db, "warm-up", 1, 100, 0)  # the store and the dataset exist before timing
        print(f"| workload | 1 process | {args.shards} shard processes | speed-up |")
        print("| --- | --- | --- | --- |")
        for label, rows, wait in (
            (f"{args.rows:,} trivial rows", args.rows, 0.0),
            (f"{args.waiting_rows:,} rows waiting {args.wait_ms:g} ms", args.waiting_rows, args.wait_ms),
        ):
            whole = timed(db, f"whole-{rows}-{wait}", 1, rows, wait)
            split = timed(db, f"split-{rows}-{wait}", args.shards, rows, wait)
            print(
                f"| {label} | {whole:.2f} s ({rows / whole:,.0f} rows/s) | {split:.2f} s "
                f"({rows / split:,.0f} rows/s) | {whole / split:.2f}x |"
            )


if __name__ == "__main__":
    main()
