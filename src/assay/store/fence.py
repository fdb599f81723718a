"""Fencing: a run's writes name its lease, and the store refuses them once it is not theirs.

A run that was paused (SIGSTOP, a frozen VM, a long GC pause) past its lease's time to
live comes back not knowing another process took its shard over. Whatever it does next
(commit the rows it had queued, mark the experiment failed) must not land: each of
those transactions starts by touching the lease row with the run's token, and is
rolled back whole when no row is touched. Touching (an UPDATE, not a SELECT) takes the
row's lock in PostgreSQL, so a takeover waits for a batch already past its check, and a
batch waits for a takeover already made: whichever commits first, the other sees it.
SQLite's writers take turns on the whole file, which gives the same order.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from assay.errors import LeaseFencedError

__all__ = ["FENCE_SQL", "Fence", "LeaseFencedError", "hold"]

FENCE_SQL = (
    "UPDATE leases SET token = token WHERE experiment_id = ? AND shard = ? AND token = ? RETURNING shard"
)


@dataclass(frozen=True)
class Fence:
    """The lease a run's writes must still hold: its experiment, shard and token."""

    experiment_id: uuid.UUID
    shard: int
    token: str

    @property
    def params(self) -> tuple[str, int, str]:
        return str(self.experiment_id), self.shard, self.token


def refused_message(fence_params: Any) -> str:
    shard = fence_params[1]
    return (
        f"the lease of shard {shard + 1} (from 1) of experiment {fence_params[0]} is no longer this run's "
        "(another process took it over): the write was refused, nothing of it stored"
    )


def hold(conn: Any, fence: Fence | None) -> None:
    """In a transaction on ``conn``: go on only while ``fence`` is the lease's holder."""
    if fence is not None and conn.execute(FENCE_SQL, fence.params).fetchone() is None:
        raise LeaseFencedError(refused_message(fence.params))
