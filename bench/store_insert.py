"""The writer's SQLite insert, variant by variant: CPU a row of ``write_batch`` (batches of
1,000 rows of the core benchmark) with the schema as it is, without each secondary
index, with run-level PRAGMAs, and with the batch as one JSON array per table.

    .venv/bin/python bench/store_insert.py [N] [--repeat R]

Each variant writes the same encoded rows into a fresh store; the best of R rounds is
printed in microseconds of the writing thread's CPU a row.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from row_stages import _options_for, target

from assay import Client
from assay.evaluation._api import _prepare
from assay.store import _row_text as rows_module

INDEXES = (
    "runs_by_position",
    "runs_flagged",
    "runs_by_latency",
    "runs_by_error",
    "results_by_run",
    "results_by_pair",
    "results_by_rank",
)


def _json_rows(conn: Any, table: str, columns: str, width: int, rows: Sequence[tuple[Any, ...]]) -> None:
    import orjson

    picks = ", ".join(f"value ->> {i}" for i in range(width))
    conn.execute(
        f"INSERT INTO {table} ({columns}) SELECT {picks} FROM json_each(?)", (orjson.dumps(rows).decode(),)
    )


def _variants() -> dict[str, Callable[[Any], None]]:
    def run_each(template: str, *names: str) -> Callable[[Any], None]:
        def setup(conn: Any) -> None:
            for name in names:
                conn.execute(template.format(name))

        return setup

    def drop(*names: str) -> Callable[[Any], None]:
        return run_each("DROP INDEX {}", *names)

    def pragma(*settings: str) -> Callable[[Any], None]:
        return run_each("PRAGMA {}", *settings)

    variants: dict[str, Callable[[Any], None]] = {"as it is": lambda conn: None}
    variants.update({f"without {name}": drop(name) for name in INDEXES})
    variants["without all seven"] = drop(*INDEXES)
    variants["foreign_keys=OFF"] = pragma("foreign_keys=OFF")
    variants["cache_size=-65536"] = pragma("cache_size=-65536")
    variants["wal_autocheckpoint=10000"] = pragma("wal_autocheckpoint=10000")
    variants["one JSON array per table"] = lambda conn: None
    return variants


def _encoded(n: int, path: Path) -> tuple[Client, Any, Any, list[Any]]:
    client = Client(str(path))
    client.create_dataset("bench")
    client.create_examples(
        inputs=[{"x": i} for i in range(n)],
        outputs=[{"answer": 2 * i} for i in range(n)],
        dataset_name="bench",
    )
    prepared = _prepare(target, _options_for(client, "insert"))
    pipeline, feed, store, exp = prepared.pipeline, prepared.feed, prepared.store, prepared.record.id
    encoded = []
    while (planned := feed.next()) is not None:
        run = pipeline.target.run_sync(planned.example, planned.repetition)
        row = pipeline._row(planned, run, pipeline._evaluate_sync(run, planned.example))
        encoded.append(store.prepare_row(exp, row))
    return client, store, exp, encoded


def one_round(n: int, folder: Path, index: int, name: str, setup: Callable[[Any], None]) -> float:
    client, store, exp, encoded = _encoded(n, folder / f"insert-{index}-{abs(hash(name))}.db")
    setup(store.conn)
    original = rows_module.insert_many
    if name == "one JSON array per table":
        rows_module.insert_many = _json_rows
    try:
        start = time.thread_time()
        for offset in range(0, n, 1000):
            store.write_batch(exp, encoded[offset : offset + 1000], None)
        spent = time.thread_time() - start
    finally:
        rows_module.insert_many = original
        client.close()
    return spent / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int, nargs="?", default=10_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        for index in range(args.repeat):
            for name, setup in _variants().items():
                us = one_round(args.n, Path(folder), index, name, setup)
                best[name] = min(us, best.get(name, us))
    for name, us in best.items():
        print(f"{name:>28} {us:6.1f} us/row")


if __name__ == "__main__":
    main()
