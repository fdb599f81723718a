"""The cost of durability: the same run with SQLite's synchronous=FULL (the default: each
committed batch is on the disk before the commit returns) and NORMAL (the last commits
may be lost on power loss, never the file's consistency).

    .venv/bin/python bench/durability.py [N ...] [--rounds R]

For each N (default 10,000), rounds alternate FULL and NORMAL (this machine's speed
drifts; alternating spreads the drift over both) into a new SQLite file each, and print
each round, then both medians and their ratio. Where the store lives matters: tmpfs
has no disk to wait for, so by default the files go in the current directory's disk.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from assay import Client, evaluate


def target(inputs: dict) -> dict:
    return {"answer": inputs["x"] * 2}


def doubled(outputs: dict, reference_outputs: dict) -> bool:
    return outputs["answer"] == reference_outputs["answer"]


def one_round(n: int, folder: Path, level: str, index: int) -> float:
    """Rows per second of one run at synchronous=``level``."""
    os.environ["ASSAY_SQLITE_SYNCHRONOUS"] = level
    client = Client(str(folder / f"{level}-{n}-{index}.db"))
    client.create_dataset("bench")
    client.create_examples(
        inputs=[{"x": i} for i in range(n)],
        outputs=[{"answer": 2 * i} for i in range(n)],
        dataset_name="bench",
    )
    start = time.perf_counter()
    results = evaluate(target, data="bench", evaluators=[doubled], client=client, progress=False)
    elapsed = time.perf_counter() - start
    assert client.store.count_rows(results.experiment.id) == n
    client.close()
    return n / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sizes", nargs="*", type=int, default=[10_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", default=".", help="where the store files go (a real disk)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="assay-durability-") as scratch:
        folder = Path(scratch)
        for n in args.sizes:
            speeds: dict[str, list[float]] = {"FULL": [], "NORMAL": []}
            for index in range(args.rounds):
                for level in ("FULL", "NORMAL") if index % 2 == 0 else ("NORMAL", "FULL"):
                    speed = one_round(n, folder, level, index)
                    speeds[level].append(speed)
                    print(f"n={n} round {index} synchronous={level}: {speed:,.0f} rows/s", flush=True)
            full, normal = statistics.median(speeds["FULL"]), statistics.median(speeds["NORMAL"])
            print(
                f"n={n}: median FULL {full:,.0f} rows/s, NORMAL {normal:,.0f} rows/s; "
                f"FULL costs {100 * (1 - full / normal):.1f}% ({args.rounds} rounds each, alternated)"
            )


if __name__ == "__main__":
    main()
