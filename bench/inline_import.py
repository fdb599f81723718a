"""Inline data becoming a stored dataset: ``evaluate(data=[{...}, ...])``'s first stage.

    .venv/bin/python bench/inline_import.py [N] [--rounds R] [--before PYTHON]

Each round, in a fresh process per side (alternating, with ``--before`` an earlier
checkout's assay as another interpreter has it): N dicts ``{"inputs", "outputs"}`` (built
before the clock) stored into a new SQLite file by ``resolve_data``, as ``evaluate`` does,
then the stored examples read as the run's feed reads them. Prints each side's median
examples/s by wall time and by CPU time (this process's only: a loaded machine's wall
time says more about the load than about the code), and the feed's CPU per example.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _rounds import alternate, run_round


def child(n: int, folder: str) -> dict[str, Any]:
    from assay import Client
    from assay.evaluation._data import resolve_data

    data = [{"inputs": {"x": i}, "outputs": {"answer": 2 * i}} for i in range(n)]
    client = Client(str(Path(folder) / "inline.db"))
    wall, cpu = time.perf_counter(), time.process_time()
    resolved = resolve_data(data, client.store)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    fed = time.process_time()
    assert sum(1 for _ in resolved.examples(client.store)) == n
    fed = time.process_time() - fed
    client.close()
    return {"wall": n / wall, "cpu": n / cpu, "feed_us": fed / n * 1e6}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int, nargs="?", default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", metavar="PYTHON", help="also time assay as this interpreter has it")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(int(args.child[0]), args.child[1])))
        return
    sides = {"assay": sys.executable, **({"before": args.before} if args.before else {})}

    def report(round_: int, side: str, got: dict[str, Any]) -> None:
        print(f"  round {round_ + 1} {side}: {got['cpu']:,.0f}/s CPU", flush=True)

    figures = alternate(
        sides, args.rounds, lambda side: run_round(__file__, [str(args.n)], python=sides[side]), report
    )
    print(f"\n{args.n:,} inline examples, median of {args.rounds} rounds")
    print(f"{'side':>8} {'examples/s wall':>16} {'examples/s CPU':>15} {'feed CPU us/ex':>15}")
    for side in sides:
        median = {key: statistics.median(f[key] for f in figures[side]) for key in ("wall", "cpu", "feed_us")}
        print(f"{side:>8} {median['wall']:16,.0f} {median['cpu']:15,.0f} {median['feed_us']:15.2f}")


if __name__ == "__main__":
    main()
