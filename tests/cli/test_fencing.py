"""A run paused past its lease's time to live (SIGSTOP) comes back to find its shard taken
over: real `assay run` processes on a SQLite file and on PostgreSQL. The paused run must
write nothing more and leave the experiment's status alone; the run that took over must
complete undisturbed, with every row stored once.

Waits are on what the store shows (the lease's expiry, its holder, the row count), never
on fixed sleeps; the short ``ASSAY_LEASE_TTL`` is what makes a pause lose the lease.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cli.conftest import ASSAY, write_data

from assay import Client
from assay.evaluation.audit import figure_mismatches

APP = """
import os
import time


def work(inputs):
    time.sleep(float(os.environ["ROW_SECONDS"]))
    return {"answer": inputs["q"].upper(), "pid": os.getpid()}


def correct(outputs, reference_outputs):
    return outputs.get("answer") == reference_outputs["answer"]
"""

ROWS = 1000  # over the SQLite writer process's threshold: batches go through it
TTL = "2"
# A row's time in the target: slow enough that the first run is paused part way and the
# new holder is still running when it wakes; a holder no one overlaps may hurry.
SLOW_ROW, QUICK_ROW = "0.02", "0.002"


RUN = [str(ASSAY), "run", "app:work", "--data", "data.jsonl", "-e", "app:correct"]


@pytest.fixture(params=["sqlite", "postgres"])
def fenced_project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    (tmp_path / "app.py").write_text(APP, encoding="utf-8")
    write_data(tmp_path / "data.jsonl", ROWS)
    if request.param == "sqlite":
        yield tmp_path, str(tmp_path / "db.sqlite")
    else:
        yield tmp_path, str(request.getfixturevalue("postgres_store_url"))


_started: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _stop_leftovers() -> Iterator[None]:
    yield
    while _started:
        process = _started.pop()
        if process.poll() is None:
            os.kill(process.pid, signal.SIGCONT)
            process.kill()
        process.communicate()


def start(project: Path, db: str, *extra: str, row_seconds: str = SLOW_ROW) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_DATABASE_URL"}
    env["ASSAY_LEASE_TTL"] = TTL
    env["ROW_SECONDS"] = row_seconds
    process = subprocess.Popen(
        [*RUN, "--db", db, "--experiment", "fenced", "--concurrency", "4", *extra],
        cwd=project,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _started.append(process)
    return process


def query(db: str, sql: str, *params: Any) -> list[Any]:
    client = Client(db)
    try:
        return [tuple(row) for row in client.store.conn.execute(sql, params).fetchall()]  # type: ignore[attr-defined]
    finally:
        client.close()


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.02)


def stored(db: str) -> int:
    return int(query(db, "SELECT COUNT(*) FROM runs")[0][0])


def rows_by(db: str, pid: int) -> int:
    """How many stored rows the run with ``pid`` computed."""
    client = Client(db)
    try:
        return sum(row["run"].outputs["pid"] == pid for row in client.read_experiment("fenced"))
    finally:
        client.close()


def lease(db: str) -> tuple[int, float]:
    rows = query(db, "SELECT pid, expires_at FROM leases")
    return (int(rows[0][0]), float(rows[0][1])) if rows else (0, 0.0)


@pytest.mark.slow
@pytest.mark.parametrize("continued", ["while the new holder runs", "after it completed"])
def test_a_paused_run_that_lost_its_lease_writes_nothing_and_leaves_the_status_alone(
    fenced_project: tuple[Path, str], continued: str
) -> None:
    project, db = fenced_project
    paused = start(project, db)
    wait_for(lambda: stored(db) >= 100, "the first run's first rows")
    os.kill(paused.pid, signal.SIGSTOP)  # rows in flight and queued stay in its memory
    assert stored(db) < ROWS, "the first run finished before it could be paused"
    _, expires_at = lease(db)
    wait_for(lambda: time.time() > expires_at + 0.1, "the paused run's lease to expire")
    overlapped = continued == "while the new holder runs"
    taker = start(project, db, "--resume", "--wait", row_seconds=SLOW_ROW if overlapped else QUICK_ROW)
    wait_for(lambda: lease(db)[0] == taker.pid, "the second run to take the lease")
    paused_rows = rows_by(db, paused.pid)  # all it stored before it lost the lease
    if not overlapped:
        out, err = taker.communicate(timeout=300)
        assert taker.returncode == 0, err
    os.kill(paused.pid, signal.SIGCONT)
    _, paused_err = paused.communicate(timeout=300)
    if overlapped:
        out, err = taker.communicate(timeout=300)
        assert taker.returncode == 0, err

    assert paused.returncode == 3, paused_err
    assert "LeaseLostError" in paused_err and "took the shard over" in paused_err, paused_err
    assert "wrote nothing after" in paused_err
    assert query(db, "SELECT status FROM experiments") == [("completed",)]
    counted = query(db, "SELECT COUNT(*), COUNT(DISTINCT position) FROM runs")
    assert counted == [(ROWS, ROWS)]  # every row, once
    assert rows_by(db, paused.pid) == paused_rows  # nothing more of it after the takeover
    assert rows_by(db, taker.pid) == ROWS - paused_rows
    client = Client(db)
    results = client.read_experiment("fenced")
    assert results.stats is not None and results.stats.rows == ROWS
    assert len(results) == ROWS
    assert figure_mismatches(client.store, results.experiment) == []  # figures agree with rows
    client.close()
