"""The crash promise, against a real SIGKILL at a random point of a run, on SQLite and on
PostgreSQL (whose writer process has two batches in flight: both count as being written).

The killed process reports each finished row through a side file (see _crash_run.py).
Every row it reported finished more than one writer interval (plus commit time) before
the kill must be stored, whole; what is lost is bounded by the writer's queue.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import _crash_run as job  # noqa: E402

from assay.evaluation._writer import RowWriter  # noqa: E402
from assay.store import open_store  # noqa: E402
from assay.store.postgres._writer import settle_postgres_writers_of  # noqa: E402
from assay.store.sqlite._writer_process import settle_writers_of  # noqa: E402

GRACE_S = 1.0
"""The writer commits within 0.1 s of a row's arrival; the rest is slack for a loaded machine."""


def reported(side: Path) -> dict[int, float]:
    finished = {}
    for line in side.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2 and len(parts[1]) > 7:  # a line cut by the kill is not a report
            finished[int(parts[0])] = float(parts[1])
    return finished


def run_and_kill(tmp_path: Path, store: str, fraction: float) -> tuple[dict[int, float], float]:
    side = tmp_path / "finished.txt"
    child = subprocess.Popen([sys.executable, str(HERE / "_crash_run.py"), store, str(side)])
    at = int(job.ROWS * fraction)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        if side.exists() and side.stat().st_size >= at * 22:  # ~22 bytes a line
            break
        time.sleep(0.005)
    killed_at = time.time()
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL, "the run ended before the kill"
    # what the run had handed its writer process is committed after its death: read the
    # store once that is done, as a resume does (its lease waits for it the same way)
    if store.startswith("postgresql"):
        opened = open_store(store)
        settle_postgres_writers_of(opened.url, child.pid)  # the url as the writer's command line names it
        opened.close()
    else:
        settle_writers_of(store, child.pid)
    return reported(side), killed_at


def stored_rows(store: str) -> tuple[set[int], int, int]:
    """The positions stored, the runs stored without their results, the stored count."""
    orphans_sql = (
        "SELECT COUNT(*) FROM runs u WHERE NOT EXISTS (SELECT 1 FROM results r WHERE r.run_id = u.id)"
    )
    connect: Any = psycopg.connect if store.startswith("postgresql") else sqlite3.connect
    with contextlib.closing(connect(store)) as conn:
        stored = {row[0] for row in conn.execute("SELECT position FROM runs")}
        orphans = conn.execute(orphans_sql).fetchone()[0]
        counted = conn.execute("SELECT row_count FROM experiment_stats").fetchone()[0]
    return stored, orphans, counted


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_sigkill_loses_only_the_last_interval_and_rows_in_flight(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    store = (
        str(tmp_path / "assay.db") if backend == "sqlite" else request.getfixturevalue("postgres_store_url")
    )
    fraction = random.uniform(0.25, 0.75)
    finished, killed_at = run_and_kill(tmp_path, store, fraction)
    stored, orphans, counted = stored_rows(store)
    assert len(finished) > 1000, f"killed too early to tell ({len(finished)} rows finished)"
    assert orphans == 0  # a row is stored whole or not at all
    assert counted == len(stored)  # the stored count was committed with the rows
    assert stored <= set(finished)  # nothing is stored before it is finished
    lost = {x: at for x, at in finished.items() if x not in stored}
    old = sorted(killed_at - at for at in lost.values() if at < killed_at - GRACE_S)
    assert not old, (
        f"{len(old)} of {len(lost)} lost rows were reported finished more than {GRACE_S} s "
        f"before the kill (up to {old[-1]:.2f} s); killed at {fraction:.0%}"
    )
    bound = RowWriter.DEFAULT_PENDING + RowWriter.DEFAULT_BATCH + job.CONCURRENCY  # queued + being written
    assert len(lost) <= bound
    print(f"killed after {len(finished)} finished rows: {len(lost)} lost, {len(stored)} stored")
