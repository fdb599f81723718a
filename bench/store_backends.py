"""Store throughput, SQLite vs PostgreSQL, on the core benchmark workload (core_throughput.py).

    .venv/bin/python bench/store_backends.py [N] [--repeat R] [--postgres URL]

Each round evaluates N examples of a stored dataset (two row evaluators, one summary
evaluator, everything stored; dataset import excluded) into a fresh SQLite file and into
a fresh PostgreSQL database, alternating, and checks every row was stored. Without
``--postgres`` (a server whose user may CREATE DATABASE) a throwaway server is started on
loopback the way the tests start one (Debian's ``postgresql`` package). Prints each
round, then the median rows per second of each backend side by side.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from assay import Client, evaluate

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from core_throughput import accuracy, doubled, positive, target  # noqa: E402


def one_round(n: int, url: str) -> float:
    """Rows per second of one evaluation of N examples into the store at ``url``."""
    client = Client(url)
    client.create_dataset("bench")
    client.create_examples(
        inputs=[{"x": i} for i in range(n)],
        outputs=[{"answer": 2 * i} for i in range(n)],
        dataset_name="bench",
    )
    started = time.perf_counter()
    results = evaluate(
        target,
        data="bench",
        evaluators=[doubled, positive],
        summary_evaluators=[accuracy],
        client=client,
        progress=False,
    )
    elapsed = time.perf_counter() - started
    assert len(client.read_experiment(results.experiment_name)) == n
    assert results.summary_results.results[0].score == 1.0
    client.close()
    return n / elapsed


@contextmanager
def postgres_server(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    spec = importlib.util.spec_from_file_location(
        "assay_bench_postgres", HERE.parent / "tests" / "_postgres.py"
    )
    assert spec is not None and spec.loader is not None
    helper = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = helper  # dataclasses look their module up
    spec.loader.exec_module(helper)
    with helper.postgres_server() as started:
        yield started


@contextmanager
def fresh_database(server: str) -> Iterator[str]:
    name = f"assay_bench_{uuid.uuid4().hex[:10]}"
    base, _, _old = server.rpartition("/")
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int, nargs="?", default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--postgres", help="a PostgreSQL server URL whose user may CREATE DATABASE")
    args = parser.parse_args()
    rates: dict[str, list[float]] = {"sqlite": [], "postgres": []}
    with postgres_server(args.postgres) as server, tempfile.TemporaryDirectory() as folder:
        for index in range(args.repeat):
            rates["sqlite"].append(one_round(args.n, f"sqlite:///{Path(folder) / f'bench-{index}.db'}"))
            with fresh_database(server) as url:
                rates["postgres"].append(one_round(args.n, url))
            print(f"round {index + 1}: sqlite {rates['sqlite'][-1]:,.0f} rows/s, "
                  f"postgres {rates['postgres'][-1]:,.0f} rows/s", flush=True)  # fmt: skip
    sqlite, postgres = statistics.median(rates["sqlite"]), statistics.median(rates["postgres"])
    print(
        f"rows={args.n} sqlite_median={sqlite:,.0f} postgres_median={postgres:,.0f} rows_per_second "
        f"postgres/sqlite={postgres / sqlite:.2f}"
    )


if __name__ == "__main__":
    main()
