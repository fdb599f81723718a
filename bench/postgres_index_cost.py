"""What each index and reference check of the row tables costs PostgreSQL's server a row.

    .venv/bin/python bench/postgres_index_cost.py [N] [--rounds R] [--only NAME ...]

N rows of the core benchmark (two row evaluators) are evaluated once into a SQLite store
and made the store's ``COPY`` text; then, R rounds, for each variant of the schema in
turn (the store's own, one index dropped, the references unchecked...), a fresh
database of a private server takes them as a run's batches do (500 rows, a ``COPY`` per
table, one transaction each). Printed: the median CPU its backend spent (``/proc``,
user + system), per row, and against the store's own schema (CPU rather than time: the
machine's other load moves it less), and the WAL written a row, which no load moves
(each index entry is a WAL record). The variants alternate within each round.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import psycopg

from assay.store import _codec as codec
from assay.store._row_text import RESULT_COLUMNS, RUN_COLUMNS
from assay.store.postgres import PostgresStore
from assay.store.postgres._copy_text import CopyReady, copy_ready
from assay.store.records import ExperimentRecord, ExperimentRow

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from postgres_writes import profiled_server, rows_of  # noqa: E402

BATCH = 500
_TICKS = os.sysconf("SC_CLK_TCK")

VARIANTS: dict[str, list[str]] = {
    "the store's schema": [],
    "runs_by_failed, as before": [
        "DROP INDEX runs_flagged",
        "CREATE INDEX runs_by_failed ON runs (experiment_id, failed, position, repetition)",
    ],
    **{
        f"without {name}": [f"DROP INDEX {name}"]
        for name in (
            "runs_by_position",
            "runs_by_latency",
            "runs_by_error",
            "results_by_run",
            "results_by_pair",
            "results_by_rank",
        )
    },
    "without the reference checks": [
        "ALTER TABLE runs DISABLE TRIGGER USER",
        "ALTER TABLE results DISABLE TRIGGER USER",
    ],
    # the statements' new rows still captured for the triggers, which then check nothing
    "the checks' capture alone": [
        f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$"
        for function in ("assay_rows_have_experiments", "assay_results_have_runs")
    ],
}


def backend_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def one_round(rows: list[ExperimentRow], url: str, changes: list[str]) -> tuple[float, int]:
    """Seconds of CPU the backend spent taking ``rows`` in batches, after ``changes``, and
    the bytes of WAL they wrote."""
    store = PostgresStore(url)
    record = ExperimentRecord(name="cost", num_examples=len(rows))
    store.create_experiment(record)
    ready: list[Any] = [copy_ready(codec.encoded(store.prepare_row(record.id, row))) for row in rows]
    assert all(type(item) is CopyReady for item in ready)
    store.close()
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in changes:
            conn.execute(statement)
        backend, wal = conn.info.backend_pid, _wal_position(conn)
        before = backend_cpu(backend)
        for start in range(0, len(ready), BATCH):
            batch = ready[start : start + BATCH]
            with conn.transaction():
                with conn.cursor().copy(f"COPY runs ({RUN_COLUMNS}, failed) FROM STDIN") as copy:
                    copy.write(b"".join(item.run_text for item in batch))
                with conn.cursor().copy(f"COPY results ({RESULT_COLUMNS}) FROM STDIN") as copy:
                    copy.write(b"".join(item.results_text for item in batch))
        spent = backend_cpu(backend) - before
        return spent, _wal_position(conn) - wal


def _wal_position(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint").fetchone()
    assert row is not None
    return int(row[0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int, nargs="?", default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="*", help="variants whose name contains one of these")
    args = parser.parse_args()
    names = [name for name in VARIANTS if not args.only or any(part in name for part in args.only)]
    names = ["the store's schema", *[name for name in names if name != "the store's schema"]]
    spent: dict[str, list[float]] = {name: [] for name in names}
    wal: dict[str, list[int]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as folder, profiled_server() as (server, _postmaster):
        rows = rows_of(args.n, folder)
        for index in range(args.rounds):
            for number, name in enumerate(names):
                database = f"cost_{index}_{number}"
                with psycopg.connect(server, autocommit=True) as admin:
                    admin.execute(f'CREATE DATABASE "{database}"')
                try:
                    url = f"{server.rpartition('/')[0]}/{database}"
                    cpu, written = one_round(rows, url, VARIANTS[name])
                    spent[name].append(cpu)
                    wal[name].append(written)
                finally:
                    with psycopg.connect(server, autocommit=True) as admin:
                        admin.execute(f'DROP DATABASE "{database}" WITH (FORCE)')
            print(f"round {index + 1} of {args.rounds}, load {os.getloadavg()[0]:.1f}", flush=True)
    base = statistics.median(spent[names[0]])
    for name in names:
        median = statistics.median(spent[name])
        print(
            f"{name:32s} {median:6.3f} s, {median / args.n * 1e6:5.1f} us a row ({median - base:+.3f}), "
            f"WAL {statistics.median(wal[name]) / args.n:,.0f} bytes a row  "
            f"rounds: {', '.join(f'{value:.2f}' for value in spent[name])}"
        )


if __name__ == "__main__":
    main()
