"""Taking a lease on PostgreSQL past a holder paused inside a write.

A run's batch touches its lease row first (the fence, ``assay.store.fence``), which locks
the row until the batch commits. A run paused inside that transaction (SIGSTOP, a frozen
VM) keeps the lock, and a take of its lease waited for it as long as the pause lasted: the
lease's expiry, which is what lets another process take over, was never acted on. So a
take waits for the row ``LOCK_WAIT`` at a time; when it could not get it and the lease has
expired, the session holding the row is ended (``pg_terminate_backend``): its transaction
rolls back, as the fence would have refused it, and the take is tried again. A holder
whose lease is live is waited for, as before.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: how long a take waits for the lease row before it checks the holder's expiry
LOCK_WAIT = "1s"
BOUND_LOCK_WAIT_SQL = f"SET LOCAL lock_timeout = '{LOCK_WAIT}'"


def take_past_paused_holder(store: Any, experiment_id: uuid.UUID, shard: int, attempt: Callable[[], T]) -> T:
    """``attempt()`` (a take whose transaction ran ``BOUND_LOCK_WAIT_SQL``), again each
    time the lease row stayed locked, ending an expired holder's session in between."""
    import psycopg

    while True:
        try:
            return attempt()
        except psycopg.errors.LockNotAvailable:
            end_expired_holder(store, experiment_id, shard)


def end_expired_holder(store: Any, experiment_id: uuid.UUID, shard: int) -> bool:
    """End the session whose transaction holds the lease row, if the lease has expired by
    the store's lease clock; whether one was ended."""
    with store.transaction() as conn:
        row = conn.execute(
            "SELECT expires_at, xmax::text FROM leases WHERE experiment_id = ? AND shard = ?",
            (str(experiment_id), shard),
        ).fetchone()
        if row is None or float(row[0]) > store.lease_clock():
            return False
        # The row's xmax names the transaction holding it; a session is ended only if it
        # also writes the leases table now (an xmax that is a multixact id, not a
        # transaction's, can then match no unrelated session).
        ended = conn.execute(
            "SELECT pg_terminate_backend(t.pid) FROM pg_locks t WHERE t.locktype = 'transactionid' "
            "AND t.transactionid::text = ? AND t.mode = 'ExclusiveLock' AND t.granted "
            "AND t.pid <> pg_backend_pid() AND EXISTS (SELECT 1 FROM pg_locks w WHERE w.pid = t.pid "
            "AND w.locktype = 'relation' AND w.relation = 'leases'::regclass "
            "AND w.mode = 'RowExclusiveLock' AND w.granted)",
            (row[1],),
        ).fetchall()
    return any(bool(found[0]) for found in ended)
