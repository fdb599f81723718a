"""On PostgreSQL, a run paused inside a write (between its fence and its commit) holds its
lease row locked. Once its lease has expired, a take must not wait for it as long as the
pause lasts: the paused session is ended (its write rolls back) and the lease is taken. A
holder whose lease is live is still waited for, and keeps its lease.

The paused run is a session of the test's own, stopped after its fence; the lease's expiry
is the store's injected clock. Waits are on the server's lock table and on the threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from assay import Client
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
