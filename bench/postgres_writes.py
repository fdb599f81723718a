"""Where a PostgreSQL store's write of a run's rows spends its time, on both sides.

    .venv/bin/python bench/postgres_writes.py [N] [--batch B] [--repeat R]

N rows of the core benchmark (two row evaluators, as ``store_backends.py`` writes them)
are evaluated once into a SQLite store and read back; then, R times, a fresh PostgreSQL
database takes them through the store's own path: ``prepare_row`` for each row, then
``write_batch`` of B rows at a time behind the run's lease, as a run's writer thread
does. A private server is started with ``pg_stat_statements`` (tracking the statements
the foreign-key triggers run, too). Printed per round: the client's CPU (preparing,
then writing), the server's CPU (its processes' ``/proc`` times), the wall time, the
statements sent (round trips), and the server's statements by time.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

from assay import Client, evaluate
from assay.store.fence import Fence
from assay.store.postgres import PostgresStore
from assay.store.records import ExperimentRecord, ExperimentRow

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from core_throughput import doubled, positive, target  # noqa: E402

_TICKS = os.sysconf("SC_CLK_TCK")


def rows_of(n: int, folder: str) -> list[ExperimentRow]:
    client = Client(f"sqlite:///{folder}/rows.db")
    client.create_dataset("bench")
    client.create_examples(
        inputs=[{"x": i} for i in range(n)],
        outputs=[{"answer": 2 * i} for i in range(n)],
        dataset_name="bench",
    )
    results = evaluate(target, data="bench", evaluators=[doubled, positive], client=client, progress=False)
    store = client.store
    record = store.get_experiment(name=results.experiment_name)
    assert record is not None
    rows = store.load_rows(record)
    client.close()
    return rows


def evaluate_round(n: int, url: str, postmaster: int) -> dict[str, Any]:
    """The whole of ``store_backends.py``'s timed part: ``evaluate`` of a stored dataset."""
    from core_throughput import accuracy

    client = Client(url)
    client.create_dataset("bench")
    client.create_examples(
        inputs=[{"x": i} for i in range(n)],
        outputs=[{"answer": 2 * i} for i in range(n)],
        dataset_name="bench",
    )
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("SELECT pg_stat_statements_reset()")
    server_before, wall_before, cpu_before = (
        server_cpu_seconds(postmaster),
        time.perf_counter(),
        time.process_time(),
    )
    evaluate(
        target, data="bench", evaluators=[doubled, positive], summary_evaluators=[accuracy],
        client=client, progress=False,
    )  # fmt: skip
    wall, cpu = time.perf_counter() - wall_before, time.process_time() - cpu_before
    server = server_cpu_seconds(postmaster) - server_before
    client.close()
    return {"prepare": 0.0, "write": cpu, "server": server, "wall": wall, "statements": _statements(url)}


def _statements(url: str) -> list[Any]:
    with psycopg.connect(url, autocommit=True) as admin:
        return admin.execute(
            "SELECT toplevel, calls, rows, total_exec_time, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) "
            "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC"
        ).fetchall()


def server_cpu_seconds(postmaster_pid: int) -> float:
    """User + system CPU of the server: the postmaster and every process it started,
    those that have ended included (a backend whose connection closed)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent, utime, stime = int(fields[1]), int(fields[11]), int(fields[12])
        if int(entry) == postmaster_pid:  # with its children's that ended (a closed connection's)
            total += utime + stime + int(fields[13]) + int(fields[14])
        elif parent == postmaster_pid:
            total += utime + stime
    return total / _TICKS


def one_round(rows: list[ExperimentRow], url: str, postmaster: int, batch: int) -> dict[str, Any]:
    store = PostgresStore(url)
    record = ExperimentRecord(name=f"bench-{uuid.uuid4().hex[:8]}", num_examples=len(rows))
    store.create_experiment(record)
    token = uuid.uuid4().hex
    store.take_lease(record.id, 0, 1, host="bench", pid=os.getpid(), token=token, ttl=600)
    fence = Fence(record.id, 0, token)
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("SELECT pg_stat_statements_reset()")
    started_cpu = time.thread_time()
    prepared = [store.prepare_row(record.id, row) for row in rows]
    prepare_cpu = time.thread_time() - started_cpu
    server_before, wall_before, cpu_before = (
        server_cpu_seconds(postmaster),
        time.perf_counter(),
        time.thread_time(),
    )
    for start in range(0, len(prepared), batch):
        store.write_batch(record.id, prepared[start : start + batch], None, fence)
    wall, write_cpu = time.perf_counter() - wall_before, time.thread_time() - cpu_before
    server = server_cpu_seconds(postmaster) - server_before
    statements = _statements(url)
    assert store.count_rows(record.id) == len(rows)
    store.close()
    return {
        "prepare": prepare_cpu,
        "write": write_cpu,
        "server": server,
        "wall": wall,
        "statements": statements,
    }


@contextmanager
def profiled_server() -> Iterator[tuple[str, int]]:
    """A private server (as the tests start one) that loads ``pg_stat_statements``."""
    spec = importlib.util.spec_from_file_location(
        "assay_bench_postgres", HERE.parent / "tests" / "_postgres.py"
    )
    assert spec is not None and spec.loader is not None
    helper = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = helper
    spec.loader.exec_module(helper)
    server = helper._start_private_server()
    try:
        conf = server.data / "postgresql.auto.conf"
        settings = "shared_preload_libraries = 'pg_stat_statements'\npg_stat_statements.track = 'all'\n"
        helper.subprocess.run(["sh", "-c", f"cat >> {conf}"], input=settings, text=True, check=True)
        log = str(server.base / "server.log")  # a log file: else the server holds our pipe open
        server._run("pg_ctl", "-D", str(server.data), "-l", log, "-w", "restart", "-m", "fast")
        postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
        yield server.url, postmaster
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int, nargs="?", default=10_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--evaluate", action="store_true", help="profile the whole evaluate() instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, profiled_server() as (server, postmaster):
        rows = rows_of(args.n, folder)
        for index in range(args.repeat):
            name = f"assay_profile_{index}"
            with psycopg.connect(server, autocommit=True) as admin:
                admin.execute(f'CREATE DATABASE "{name}"')
            url = server.rpartition("/")[0] + f"/{name}"
            with psycopg.connect(url, autocommit=True) as admin:
                admin.execute("CREATE EXTENSION pg_stat_statements")
            if args.evaluate:
                got = evaluate_round(args.n, url, postmaster)
            else:
                got = one_round(rows, url, postmaster, args.batch)
            print(
                f"round {index + 1}: {args.n:,} rows in batches of {args.batch}: client prepare "
                f"{got['prepare']:.2f} s CPU, client write {got['write']:.2f} s CPU, server "
                f"{got['server']:.2f} s CPU, write wall {got['wall']:.2f} s, statements sent "
                f"{sum(s[1] for s in got['statements'] if s[0]):,}"
            )
            for toplevel, calls, count, ms, query in got["statements"][:12]:
                print(
                    f"  {'top ' if toplevel else 'nest'} {calls:>7,} calls {count:>8,} rows {ms:8.1f} ms  {query}"
                )


if __name__ == "__main__":
    main()
