"""Could another process insert inline data's examples while this one encodes them?

    .venv/bin/python bench/inline_overlap.py [N] [--rounds R]

The data stage's last part, alternating in fresh processes: N examples' values (content
ids, the store's JSON) encoded a page of 2,048 at a time and inserted into a new SQLite
store's examples table in one transaction, either here (``one``, as ``resolve_data``
does) or by a child process started before the clock, as the run's writer process is
(``two``: each encoded page is sent over a pipe, pickled, and the child inserts it while
this process encodes the next). Both sides' wall time covers the encoding and the commit;
the child's start does not count. Prints medians of examples/s and the load average.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from _rounds import alternate, compile_bytecode, run_round

PAGE = 2048


def _pages(n: int, dataset_id: str) -> Any:
    """The rows ``_examples.insert_values`` makes, a page at a time."""
    from assay._ids import content_id_texts
    from assay.store._json import dumps

    named = content_id_texts("ab" * 32)
    data = [{"inputs": {"x": i}, "outputs": {"answer": 2 * i}} for i in range(n)]
    for start in range(0, n, PAGE):
        page = data[start : start + PAGE]
        yield [
            (
                named(at),
                dataset_id,
                at,
                dumps(d["inputs"]),
                dumps(d["outputs"]),
                None,
                "2026-12-06T00:00:00",
                1,
            )
            for at, d in enumerate(page, start)
        ]


def _insert(store: Any, rows: list[tuple[Any, ...]]) -> None:
    from assay.store import _row_text
    from assay.store.sqlite._examples import COLUMNS

    _row_text.insert_many(store.conn, "examples", COLUMNS, 8, rows)


def _inserter(path: str, pipe: Connection) -> None:
    """The child: inserts what arrives in one transaction, then says it committed."""
    from assay import Client

    store = Client(path).store
    pipe.send("ready")
    with store.transaction():
        while (rows := pipe.recv()) is not None:
            _insert(store, rows)
    pipe.send("committed")


def child(n: int, side: str, folder: str) -> dict[str, float]:
    from assay import Client

    path = str(Path(folder) / "overlap.db")
    client = Client(path)
    dataset_id = str(client.create_dataset("bench").id)
    if side == "one":
        wall = time.perf_counter()
        with client.store.transaction():
            for rows in _pages(n, dataset_id):
                _insert(client.store, rows)
        return {"rate": n / (time.perf_counter() - wall)}
    here, there = multiprocessing.get_context("spawn").Pipe()
    process = multiprocessing.get_context("spawn").Process(target=_inserter, args=(path, there))
    process.start()
    assert here.recv() == "ready"
    wall = time.perf_counter()
    for rows in _pages(n, dataset_id):
        here.send(rows)
    here.send(None)
    assert here.recv() == "committed"
    rate = n / (time.perf_counter() - wall)
    process.join()
    return {"rate": rate}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int, nargs="?", default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(int(args.child[0]), args.child[1], args.child[2])))
        return
    compile_bytecode()  # as an installed assay has it: not compiled inside the clock
    loads = [os.getloadavg()[0]]

    def measure(side: str) -> dict[str, Any]:
        got = run_round(__file__, [str(args.n), side], python=sys.executable)
        loads.append(os.getloadavg()[0])
        return got

    def report(round_: int, side: str, got: dict[str, Any]) -> None:
        print(f"  round {round_ + 1} {side}: {got['rate']:,.0f}/s", flush=True)

    figures = alternate(["one", "two"], args.rounds, measure, report)
    print(f"\n{args.n:,} examples encoded and inserted, median of {args.rounds} rounds, ", end="")
    print(f"load average {min(loads):.1f}-{max(loads):.1f}")
    for side in ("one", "two"):
        print(f"{side:>4}: {statistics.median(f['rate'] for f in figures[side]):,.0f} examples/s wall")


if __name__ == "__main__":
    main()
