"""Taking a lease on PostgreSQL past a holder paused inside a write.

A run's batch touches its lease row first (the fence, ``assay.store.fence``), which locks
the row until the batch commits. A run paused inside that transaction (SIGSTOP, a frozen
VM) keeps the lock, and a take of its lease waited for it as long as the pause lasted: the
lease's expiry, which is what lets another process take over, was never acted on. So a
take waits for the row ``LOCK_WAIT`` at a time; when it could not get it and the lease has
expired, the session holding the row is ended (``pg_terminate_backend``) if its client has
been silent inside that transaction for ``LOCK_WAIT`` (a paused process: a session at work,
such as a long delete or another take, is left alone): its transaction rolls back, as the
fence would have refused it, and the take is tried again. A live holder is waited for, as
before; so is one of another role whose sessions this role may not see (PostgreSQL shows
their state only to members of ``pg_read_all_stats``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from assay.errors import LeaseHeldError

T = TypeVar("T")

#: how long a take waits for the lease row before it checks the holder's expiry
LOCK_WAIT = "1s"
BOUND_LOCK_WAIT_SQL = f"SET LOCAL lock_timeout = '{LOCK_WAIT}'"

# The session holding the row: the row's xmax names its transaction; it must also write
# the leases table now (an xmax that is a multixact id, not a transaction's, can then match
# no unrelated session) and be idle inside its transaction for LOCK_WAIT.
_END_PAUSED_HOLDER = f"""
SELECT t.pid, a.usename, pg_terminate_backend(t.pid)
FROM pg_locks t JOIN pg_stat_activity a ON a.pid = t.pid
WHERE t.locktype = 'transactionid' AND t.transactionid::text = ? AND t.mode = 'ExclusiveLock'
  AND t.granted AND t.pid <> pg_backend_pid()
  AND a.state = 'idle in transaction' AND a.state_change < clock_timestamp() - interval '{LOCK_WAIT}'
  AND EXISTS (SELECT 1 FROM pg_locks w WHERE w.pid = t.pid AND w.locktype = 'relation'
              AND w.relation = 'leases'::regclass AND w.mode = 'RowExclusiveLock' AND w.granted)
"""


def take_past_paused_holder(
    again: Callable[[Callable[[], Any]], Any],
    store: Any,
    experiment_id: uuid.UUID,
    shard: int,
    attempt: Callable[[], T],
) -> T:
    """``attempt()`` (a take whose transaction ran ``BOUND_LOCK_WAIT_SQL``), again each
    time the lease row stayed locked, ending a paused, expired holder's session in between;
    ``again`` runs each step as the store runs a call that may meet a lost connection."""
    import psycopg

    while True:
        try:
            return again(attempt)  # type: ignore[no-any-return]
        except psycopg.errors.LockNotAvailable:
            again(lambda: end_paused_holder(store, experiment_id, shard))


def end_paused_holder(store: Any, experiment_id: uuid.UUID, shard: int) -> bool:
    """End the session that holds the lease row inside a transaction its client stopped
    talking in, if the lease has expired by the store's lease clock; whether one was ended.
    A role that may not end it gets an error saying what to grant."""
    import psycopg

    with store.transaction() as conn:
        row = conn.execute(
            "SELECT expires_at, xmax::text FROM leases WHERE experiment_id = ? AND shard = ?",
            (str(experiment_id), shard),
        ).fetchone()
        if row is None or float(row[0]) > store.lease_clock():
            return False
        try:
            ended = conn.execute(_END_PAUSED_HOLDER, (row[1],)).fetchall()
        except psycopg.errors.InsufficientPrivilege as exc:
            raise LeaseHeldError(
                f"the lease of shard {shard + 1} (from 1) of experiment {experiment_id} has expired, but "
                "the session that held it is paused inside a write and keeps its row locked, and this "
                f"database role may not end it ({exc}): grant this role pg_signal_backend, or end that "
                "session (pg_terminate_backend) or its process, then run again"
            ) from None
    return any(bool(found[2]) for found in ended)
