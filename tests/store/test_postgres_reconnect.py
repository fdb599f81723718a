"""A run on PostgreSQL rides out a server restart (`pg_ctl restart -m fast`) and its
backends killed (`pg_terminate_backend`): it reconnects, writes the batch in flight once,
and completes with every row once. When the server stays away past
``ASSAY_PG_RECONNECT_S``, the run fails saying so and how to resume, and a resume once
the server is back completes the experiment.

Each test has a private server of its own (restarted and stopped here, so no other
test's server is touched)."""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from assay import Client, evaluate
from assay.evaluation.audit import figure_mismatches

pg: Any = sys.modules["assay_tests_postgres"]  # tests/_postgres.py, loaded by the root conftest

ROWS = 3000


@pytest.fixture
def server() -> Iterator[Any]:
    private = pg._start_private_server()
    try:
        yield private
    finally:
        private.stop()


def store_url(server: Any) -> str:
    return str(pg.create_database(server.url))


def stored(url: str) -> int:
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            row = conn.execute("SELECT COUNT(*) FROM runs").fetchone()
            return int(row[0]) if row else 0
    except psycopg.Error:
        return -1  # the server is restarting


def wait_for(condition: Callable[[], bool], what: str, outcome: dict[str, Any]) -> None:
    deadline = time.monotonic() + 300
    while not condition():
        assert "error" not in outcome, "".join(traceback.format_exception(outcome["error"]))
        assert time.monotonic() < deadline, f"waited 300 s for {what}"
        time.sleep(0.02)


def target(inputs: dict[str, Any]) -> dict[str, Any]:
    time.sleep(0.002)
    return {"i": inputs["i"]}


def correct(outputs: dict[str, Any]) -> bool:
    return outputs["i"] >= 0


def start_run(url: str, **options: Any) -> tuple[threading.Thread, dict[str, Any]]:
    outcome: dict[str, Any] = {}

    def run() -> None:
        client = Client(url)
        try:
            outcome["results"] = evaluate(
                target,
                data=[{"inputs": {"i": i}} for i in range(ROWS)],
                evaluators=[correct],
                experiment="ride",
                client=client,
                progress=False,
                max_concurrency=4,
                **options,
            )
        except Exception as exc:  # noqa: BLE001 - the test looks at it
            outcome["error"] = exc
        finally:
            client.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def terminate_backends(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


def assert_whole(url: str) -> None:
    client = Client(url)
    try:
        record = client.store.get_experiment(name="ride")
        assert record is not None and record.status == "completed"
        with psycopg.connect(url) as conn:
            counted = conn.execute("SELECT COUNT(*), COUNT(DISTINCT position) FROM runs").fetchone()
            leases = conn.execute("SELECT state FROM leases").fetchall()
        assert counted == (ROWS, ROWS)  # every row, once
        assert leases == [("done",)]
        assert figure_mismatches(client.store, record) == []
    finally:
        client.close()


@pytest.mark.slow
def test_a_run_rides_out_a_restart_and_killed_backends(server: Any) -> None:
    url = store_url(server)
    thread, outcome = start_run(url)
    wait_for(lambda: stored(url) >= 300, "the first rows", outcome)
    log = str(server.base / "server.log")  # not our pipe: the new server would hold it open
    server._run("pg_ctl", "-D", str(server.data), "-l", log, "-m", "fast", "-w", "restart")
    wait_for(lambda: stored(url) >= 1500, "rows after the restart", outcome)
    assert terminate_backends(url) > 0
    wait_for(lambda: stored(url) >= 2000, "rows after the backends were killed", outcome)
    assert terminate_backends(url) > 0
    thread.join(timeout=300)
    assert "error" not in outcome, outcome.get("error")
    assert_whole(url)


@pytest.mark.slow
def test_a_server_gone_too_long_fails_the_run_saying_how_to_resume(
    server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_PG_RECONNECT_S", "1")
    monkeypatch.setenv("ASSAY_LEASE_TTL", "2")
    url = store_url(server)
    thread, outcome = start_run(url)
    wait_for(lambda: stored(url) >= 300, "the first rows", outcome)
    server._run("pg_ctl", "-D", str(server.data), "-m", "fast", "-w", "stop")
    thread.join(timeout=300)
    error = outcome.get("error")
    assert error is not None, "the run went on without its server"
    text = f"{error} {error.__cause__}"
    assert "could not reconnect within 1 s" in text and "--resume" in text, text
    options = (
        f"-h 127.0.0.1 -p {server.port} -k {server.base} -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off"
    )
    server._run("pg_ctl", "-D", str(server.data), "-l", str(server.base / "server.log"), "-w",
                "-o", options, "start")  # fmt: skip
    kept = stored(url)
    assert 0 < kept < ROWS
    thread, outcome = start_run(url, resume=True, wait_for_lease=True)
    thread.join(timeout=300)
    assert "error" not in outcome, outcome.get("error")
    assert_whole(url)
