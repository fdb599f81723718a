"""Inline data becoming stored examples, by the two ways a user's script takes:
``evaluate(data=[{...}, ...])``'s first stage, and ``Client.create_examples``.

    .venv/bin/python bench/inline_import.py [N] [--rounds R] [--before PYTHON]

Each round, in a fresh process per side and path (alternating, with ``--before`` an
earlier checkout's assay as another interpreter has it), N dicts ``{"inputs",
"outputs"}`` (built before the clock) go into a new SQLite file:

- ``evaluate``: by ``resolve_data``, as ``evaluate`` calls it (with the collector's
  threshold it sets for a run), then the stored examples read as the run's feed reads them;
- ``create_examples``: ``client.create_examples(examples=[...])`` into a new dataset;
- ``columns``: ``client.create_examples(inputs=[...], outputs=[...])``.

Prints each side's median examples/s by wall time and by CPU time (this process's only:
a loaded machine's wall time says more about the load than about the code), the feed's
CPU per example, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _rounds import alternate, compile_bytecode, run_round

PATHS = ("evaluate", "create_examples", "columns")


def child(n: int, path: str, folder: str) -> dict[str, Any]:
    from assay import Client

    data = [{"inputs": {"x": i}, "outputs": {"answer": 2 * i}} for i in range(n)]
    client = Client(str(Path(folder) / "inline.db"))
    if path == "evaluate":
        return _evaluate_path(client, data)
    dataset = client.create_dataset("bench")
    inputs, outputs = [d["inputs"] for d in data], [d["outputs"] for d in data]
    wall, cpu = time.perf_counter(), time.process_time()
    if path == "create_examples":
        added = client.create_examples(examples=data, dataset_id=dataset.id)
    else:
        added = client.create_examples(inputs=inputs, outputs=outputs, dataset_id=dataset.id)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert added["count"] == n
    client.close()
    return {"wall": n / wall, "cpu": n / cpu, "feed_us": 0.0}


def _evaluate_path(client: Any, data: list[dict[str, Any]]) -> dict[str, Any]:
    from assay.evaluation._api import _fewer_collections
    from assay.evaluation._data import resolve_data

    n = len(data)
    wall, cpu = time.perf_counter(), time.process_time()
    with _fewer_collections():  # as evaluate() resolves its data
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
    parser.add_argument("--paths", default=",".join(PATHS), help=f"some of {','.join(PATHS)}")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(int(args.child[0]), args.child[1], args.child[2])))
        return
    pythons = {"assay": sys.executable, **({"before": args.before} if args.before else {})}
    for python in pythons.values():
        compile_bytecode(python)
    sides = [(side, path) for path in args.paths.split(",") for side in pythons]
    loads = [os.getloadavg()[0]]

    def measure(side: tuple[str, str]) -> dict[str, Any]:
        got = run_round(__file__, [str(args.n), side[1]], python=pythons[side[0]])
        loads.append(os.getloadavg()[0])
        return got

    def report(round_: int, side: tuple[str, str], got: dict[str, Any]) -> None:
        print(
            f"  round {round_ + 1} {side[0]} {side[1]}: {got['wall']:,.0f}/s wall, {got['cpu']:,.0f}/s CPU",
            flush=True,
        )

    figures = alternate(sides, args.rounds, measure, report)
    print(
        f"\n{args.n:,} inline examples, median of {args.rounds} rounds, load average {min(loads):.1f}-{max(loads):.1f}"
    )
    print(f"{'path':>16} {'side':>8} {'examples/s wall':>16} {'examples/s CPU':>15} {'feed CPU us/ex':>15}")
    for side, path in sides:
        got = figures[(side, path)]
        median = {key: statistics.median(f[key] for f in got) for key in ("wall", "cpu", "feed_us")}
        print(
            f"{path:>16} {side:>8} {median['wall']:16,.0f} {median['cpu']:15,.0f} {median['feed_us']:15.2f}"
        )


if __name__ == "__main__":
    main()
