"""On PostgreSQL, a run paused inside a write (between its fence and its commit) holds its
lease row locked. Once its lease has expired, a take must not wait for it as long as the
pause lasts: the paused session is ended (its write rolls back) and the lease is taken. A
holder whose lease is live is still waited for, and keeps its lease; so is a session at
work (not silent inside its transaction). A role that may not end the paused session is
told what to grant, and a take whose own connection was dropped reconnects.

The paused run is a session of the test's own, stopped after its fence; the lease's expiry
is the store's injected clock. Waits are on the server's lock table and on the threads."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from assay import Client
from assay.errors import LeaseHeldError
from assay.store.fence import FENCE_SQL
from assay.store.records import ExperimentRecord, Lease

TTL = 30.0


@pytest.fixture
def held(postgres_store_url: str) -> Iterator[tuple[Client, ExperimentRecord, psycopg.Connection]]:
    """A store with an experiment whose lease ("paused") is held by a session stopped
    inside a write: its fence ran, its commit never came."""
    client = Client(postgres_store_url)
    record = ExperimentRecord(name="paused")
    client.store.create_experiment(record)
    lease = client.store.take_lease(record.id, 0, 1, host="h", pid=1, token="paused", ttl=TTL)
    assert lease.token == "paused"
    paused = psycopg.connect(postgres_store_url)
    fenced = paused.execute(FENCE_SQL.replace("?", "%s"), (str(record.id), 0, "paused")).fetchone()
    assert fenced is not None
    yield client, record, paused
    paused.close()
    client.close()


def _take_in_a_thread(client: Client, record: ExperimentRecord, outcome: list[object]) -> threading.Thread:
    def take() -> None:
        try:
            outcome.append(client.store.take_lease(record.id, 0, 1, host="h", pid=2, token="taker", ttl=TTL))
        except Exception as exc:  # noqa: BLE001 - the test reads it
            outcome.append(exc)

    thread = threading.Thread(target=take)
    thread.start()
    return thread


def test_an_expired_holder_paused_inside_a_write_is_ended_and_its_lease_taken(
    held: tuple[Client, ExperimentRecord, psycopg.Connection],
) -> None:
    client, record, paused = held
    client.store.lease_clock = lambda: time.time() + 2 * TTL  # type: ignore[method-assign]
    outcome: list[object] = []
    taker = _take_in_a_thread(client, record, outcome)
    taker.join(timeout=120)  # a ceiling for a hang (the old code waited for ever), not a timing
    if taker.is_alive():
        paused.cancel_safe()
        paused.close()
        taker.join()
        pytest.fail("the take waited for the paused holder's write")
    (lease,) = outcome
    assert isinstance(lease, Lease) and lease.token == "taker" and lease.pid == 2, outcome
    with pytest.raises(psycopg.OperationalError):  # its session was ended: its write rolled back
        paused.commit()


def test_a_live_holder_inside_a_write_is_waited_for_and_keeps_its_lease(
    held: tuple[Client, ExperimentRecord, psycopg.Connection], postgres_store_url: str
) -> None:
    client, record, paused = held
    outcome: list[object] = []
    taker = _take_in_a_thread(client, record, outcome)
    _wait_for_a_lock_waiter(postgres_store_url, taker)
    assert taker.is_alive() and outcome == []
    paused.commit()  # the holder's write ends
    taker.join()
    (lease,) = outcome
    assert isinstance(lease, Lease) and lease.token == "paused", outcome


def _wait_for_a_lock_waiter(url: str, thread: threading.Thread) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        while thread.is_alive():
            waiting = conn.execute(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ).fetchone()
            if waiting and waiting[0]:
                return
            conn.execute("SELECT pg_sleep(0.01)")


def test_a_holder_at_work_is_not_ended_even_once_expired(
    held: tuple[Client, ExperimentRecord, psycopg.Connection],
) -> None:
    """A session busy inside its write (a long statement, not a silent client) is no paused
    process: the take waits for its commit, which lands, then takes the expired lease."""
    client, record, paused = held
    client.store.lease_clock = lambda: time.time() + 2 * TTL  # type: ignore[method-assign]
    busy_errors: list[BaseException] = []

    def busy() -> None:
        try:
            paused.execute("SELECT pg_sleep(3)")  # at work for longer than a take's lock wait
            paused.commit()
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            busy_errors.append(exc)

    worker = threading.Thread(target=busy)
    worker.start()
    outcome: list[object] = []
    taker = _take_in_a_thread(client, record, outcome)
    worker.join()
    taker.join()
    assert busy_errors == []  # its write committed: its session was not ended
    (lease,) = outcome
    assert isinstance(lease, Lease) and lease.token == "taker", outcome


def test_a_role_that_may_not_end_the_paused_session_is_told_what_to_grant(
    held: tuple[Client, ExperimentRecord, psycopg.Connection], postgres_store_url: str
) -> None:
    """It sees the holder's session is paused (pg_read_all_stats) but may not end a
    superuser's. (A role that cannot see other roles' sessions waits, as before.)"""
    _, record, _ = held  # paused by the superuser the suite's server runs the store as
    role = f"taker_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_store_url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
        admin.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {role}")
        admin.execute(f"GRANT ALL ON SCHEMA public TO {role}")
        admin.execute(f"GRANT pg_read_all_stats TO {role}")  # sees the session is paused
    other = Client(postgres_store_url.replace("assay@", f"{role}@", 1))
    other.store.lease_clock = lambda: time.time() + 2 * TTL  # type: ignore[method-assign]
    with pytest.raises(LeaseHeldError, match=r"may not end it .* grant this role pg_signal_backend"):
        other.store.take_lease(record.id, 0, 1, host="h", pid=2, token="taker", ttl=TTL)
    other.close()


def test_a_take_whose_own_connection_was_dropped_reconnects(postgres_store_url: str) -> None:
    client = Client(postgres_store_url)
    record = ExperimentRecord(name="dropped")
    client.store.create_experiment(record)
    own = client.store.conn.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[attr-defined]
    with psycopg.connect(postgres_store_url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (own,))
    lease = client.store.take_lease(record.id, 0, 1, host="h", pid=1, token="t", ttl=TTL)
    assert lease.token == "t"
    client.close()
