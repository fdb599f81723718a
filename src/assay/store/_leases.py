"""Leases on experiment shards, in SQL that runs as written on SQLite and PostgreSQL.

Taking a lease is one ``INSERT ... ON CONFLICT DO UPDATE ... WHERE`` with an expiry
comparison: it inserts the row, or takes over a row whose holder let it expire (or that
the caller already holds, or whose holder the caller knows is dead), atomically in both databases; ``RETURNING`` says whether it
did. Every other change names the holder's token, so a holder whose lease was taken over
changes nothing. Finishing a shard first locks the experiment's row, so finishers take
turns and exactly one of them sees every shard done (under PostgreSQL's READ COMMITTED a
statement after a lock wait sees what the earlier finisher committed).

Times are seconds since the epoch from this machine's clock: on one machine, or on
machines whose clocks agree to well within the lease's time to live.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from assay.schemas import utcnow
from assay.store import _codec as codec
from assay.store.records import Lease, LeaseClaim

__all__ = ["LeaseQueries"]

_COLUMNS = "experiment_id, shard, shards, host, pid, token, expires_at, state"

_TAKE = f"""
INSERT INTO leases ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, 'running')
ON CONFLICT (experiment_id, shard) DO UPDATE SET
    shards = excluded.shards, host = excluded.host, pid = excluded.pid,
    token = excluded.token, expires_at = excluded.expires_at, state = 'running'
WHERE leases.expires_at <= ? OR leases.token = excluded.token OR leases.token = ?
RETURNING token
"""


class LeaseQueries:
    """Mixed into a store; uses its ``conn`` and ``transaction`` (DB-API style, ``?``)."""

    #: seconds since the epoch, for expiry; a test injects a clock it moves by hand
    lease_clock: Callable[[], float] = time.time

    @property
    def conn(self) -> Any:
        raise NotImplementedError  # provided by the store

    def transaction(self) -> Any:
        raise NotImplementedError  # provided by the store

    def take_lease(
        self,
        experiment_id: uuid.UUID,
        shard: int,
        shards: int,
        *,
        host: str,
        pid: int,
        token: str,
        ttl: float,
        stale_token: str | None = None,
    ) -> Lease:
        """Take the lease of ``shard`` unless another holder's lease is live (or it is
        ``stale_token``'s, a holder known dead); returns the lease as stored afterwards
        (``lease.token == token`` when taken)."""
        now = self.lease_clock()
        exp = str(experiment_id)
        params = (exp, shard, shards, host, pid, token, now + ttl, now, stale_token)
        with self.transaction() as conn:
            self._bound_lock_wait(conn)
            conn.execute(_TAKE, params).fetchall()
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM leases WHERE experiment_id = ? AND shard = ?", (exp, shard)
            ).fetchone()
        return _lease_from(row)

    def _bound_lock_wait(self, conn: Any) -> None:
        """How long a take may wait for a locked lease row (PostgreSQL: see its store);
        SQLite's writers take turns on the whole file."""

    def _claim_new(self, conn: Any, experiment_id: uuid.UUID, claim: LeaseClaim) -> None:
        """Take ``claim`` on a new experiment, in its creating transaction on ``conn``."""
        conn.execute(
            f"INSERT INTO leases ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, 'running')",
            (
                str(experiment_id),
                claim.shard,
                claim.shards,
                claim.host,
                claim.pid,
                claim.token,
                self.lease_clock() + claim.ttl,
            ),
        )

    def renew_lease(self, experiment_id: uuid.UUID, shard: int, token: str, ttl: float) -> bool:
        """Push the expiry on; False when the lease is no longer this holder's."""
        with self.transaction() as conn:
            row = conn.execute(
                "UPDATE leases SET expires_at = ? WHERE experiment_id = ? AND shard = ? AND token = ? "
                "AND state = 'running' RETURNING shard",
                (self.lease_clock() + ttl, str(experiment_id), shard, token),
            ).fetchone()
        return row is not None

    def release_lease(self, experiment_id: uuid.UUID, shard: int, token: str, state: str) -> None:
        """Give the lease up at once (``state``: failed or interrupted)."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE leases SET expires_at = 0, state = ? WHERE experiment_id = ? AND shard = ? "
                "AND token = ?",
                (state, str(experiment_id), shard, token),
            )

    def finish_shard(
        self, experiment_id: uuid.UUID, shard: int, token: str, *, completes: bool = False
    ) -> tuple[int, int] | None:
        """Mark the shard done and give its lease up: (shards done, shard count), or None
        when the lease was no longer this holder's. While shards remain, the experiment's
        status becomes ``partial`` in the same transaction; once none does and
        ``completes`` (a run with nothing left to store), ``completed``."""
        exp = str(experiment_id)
        with self.transaction() as conn:
            conn.execute(
                "UPDATE experiments SET status = status WHERE id = ?", (exp,)
            )  # finishers take turns
            mine = conn.execute(
                "UPDATE leases SET expires_at = 0, state = 'done' WHERE experiment_id = ? AND shard = ? "
                "AND token = ? RETURNING shards",
                (exp, shard, token),
            ).fetchone()
            if mine is None:
                return None
            done = int(
                conn.execute(
                    "SELECT COUNT(*) FROM leases WHERE experiment_id = ? AND state = 'done'", (exp,)
                ).fetchone()[0]
            )
            shards = int(mine[0])
            if done < shards:
                conn.execute("UPDATE experiments SET status = 'partial' WHERE id = ?", (exp,))
            elif completes:
                conn.execute(
                    "UPDATE experiments SET status = 'completed', finished_at = ? WHERE id = ?",
                    (codec.ts(utcnow()), exp),
                )
        return done, shards

    def list_leases(self, experiment_id: uuid.UUID) -> list[Lease]:
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM leases WHERE experiment_id = ? ORDER BY shard", (str(experiment_id),)
        ).fetchall()
        return [_lease_from(row) for row in rows]


def _lease_from(row: Any) -> Lease:
    return Lease(
        experiment_id=uuid.UUID(row[0]),
        shard=int(row[1]),
        shards=int(row[2]),
        host=row[3],
        pid=int(row[4]),
        token=row[5],
        expires_at=float(row[6]),
        state=row[7],
    )
