"""Holding the lease of one shard while it runs: taken (or waited for) before any row is
read, renewed by a heartbeat thread, ended when the shard finishes or fails.

A run of the whole experiment holds the lease of shard 0 of 1, so two processes resuming
the same experiment cannot both run it. A holder killed with SIGKILL stops renewing; once
its lease expires (``ASSAY_LEASE_TTL`` seconds, default 30, after its last renewal) another
process takes the shard over and resumes from its stored rows. On the holder's own
machine a dead holder is seen at once (no such pid), so its lease is taken at once.
"""

from __future__ import annotations

import _thread
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from assay.errors import AssayError, LeaseHeldError, LeaseLostError
from assay.evaluation._shard import Shard
from assay.store.base import Store
from assay.store.records import ExperimentRecord, Lease, LeaseClaim

if TYPE_CHECKING:
    from assay.store.fence import Fence

__all__ = ["LeaseHeldError", "LeaseLostError", "ShardLease", "lease_ttl"]

DEFAULT_TTL_S = 30.0
_TTL_VARIABLE = "ASSAY_LEASE_TTL"
_MAX_POLL_S = 1.0
log = logging.getLogger("assay.evaluation.lease")


def _alive(pid: int) -> bool:
    """Whether a process with ``pid`` runs on this machine (a reused pid reads as alive:
    the lease is then waited out, never taken from a live holder)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def lease_ttl() -> float:
    """Seconds a lease lives without renewal: ``ASSAY_LEASE_TTL``, else 30."""
    text = os.environ.get(_TTL_VARIABLE)
    if not text:
        return DEFAULT_TTL_S
    try:
        ttl = float(text)
    except ValueError:
        ttl = 0.0
    if not ttl > 0:
        raise AssayError(f"{_TTL_VARIABLE}={text!r}: give the lease time to live in seconds, e.g. 30")
    return ttl


class ShardLease:
    """The lease of ``shard`` of ``experiment``, held by this process until ``finish`` or ``release``."""

    def __init__(self, store: Store, experiment: ExperimentRecord, shard: Shard, claim: LeaseClaim) -> None:
        self._store = store
        self._experiment = experiment
        self.shard = shard
        self._claim = claim
        self._ttl = claim.ttl
        self._token = claim.token
        self._stop = threading.Event()
        self._beating = False
        self._beat_thread: int | None = None  # the heartbeat's thread id, once it runs
        # Held by the heartbeat while it renews (and tells of a loss): ending the lease
        # waits for a renewal under way, not for the thread to be scheduled and end.
        self._renewing = threading.Lock()
        self._on_lost: list[Callable[[], None]] = []
        self.lost = False

    @staticmethod
    def claim(shard: Shard) -> LeaseClaim:
        """What this process asks for: ``shard``, under a fresh token, for the time to live."""
        return LeaseClaim(
            shard.index, shard.count, socket.gethostname(), os.getpid(), secrets.token_hex(8), lease_ttl()
        )

    @classmethod
    def take(
        cls,
        store: Store,
        experiment: ExperimentRecord,
        shard: Shard,
        *,
        wait: bool,
        claim: LeaseClaim | None = None,
        taken: bool = False,
    ) -> ShardLease:
        """Take the lease (``claim``'s, else a new one), or wait for it (``wait``), or refuse
        naming its live holder. ``taken``: ``claim`` was taken with the experiment's creation."""
        lease = cls(store, experiment, shard, claim or cls.claim(shard))
        if not taken:
            lease._acquire(wait)
        lease._start_heartbeat()
        return lease

    def _acquire(self, wait: bool) -> None:
        store, claim, stale, told = self._store, self._claim, None, False
        while True:
            held = store.take_lease(
                self._experiment.id,
                claim.shard,
                claim.shards,
                host=claim.host,
                pid=claim.pid,
                token=claim.token,
                ttl=claim.ttl,
                stale_token=stale,
            )
            if held.token == claim.token:
                return
            if held.host == claim.host and held.token != stale and not _alive(held.pid):
                # its holder died on this machine: no need to wait for expiry, only for
                # what it handed its writer process to be committed
                store.settle_writers_of(held.pid)
                stale = held.token
                continue
            if not wait:
                raise LeaseHeldError(self._held_message(held))
            if not told:  # once: a waiting run says what it waits for (and a test can see it)
                log.warning("waiting for %s, run by pid %s on %s", self._what(), held.pid, held.host)
                told = True
            time.sleep(min(_MAX_POLL_S, max(0.05, held.expires_at - time.time())))

    @property
    def fence(self) -> Fence:
        """What the run's writes carry, so the store refuses them once this lease is lost."""
        from assay.store.fence import Fence  # the store's, loaded when a run starts

        return Fence(self._experiment.id, self.shard.index, self._token)

    def lost_error(self) -> LeaseLostError:
        return LeaseLostError(self._lost_message())

    def on_lost(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (from the heartbeat thread) if the lease is taken over."""
        self._on_lost.append(callback)

    def finish(self, *, completes: bool = False) -> tuple[int, int]:
        """Mark the shard done and end the lease: (shards done, shard count). ``completes``:
        the experiment is completed with it, when no other shard remains (one commit)."""
        self._stop_heartbeat()
        outcome = self._store.finish_shard(
            self._experiment.id, self.shard.index, self._token, completes=completes
        )
        if outcome is None or self.lost:
            raise self.lost_error()
        return outcome

    def release(self, state: str) -> None:
        """End the lease now (the run failed or was interrupted); the shard may run again at once."""
        self._stop_heartbeat()
        self._store.release_lease(self._experiment.id, self.shard.index, self._token, state)

    def _start_heartbeat(self) -> None:
        # Without threading.Thread's start-up hand-shake, which holds the run until the
        # new thread is scheduled and has the GIL (0.2-2 ms at load 4 on two cores): its
        # first renewal is a third of the time to live away.
        self._beating = True
        _thread.start_new_thread(self._beat, ())

    def _stop_heartbeat(self) -> None:
        """No renewal follows this, and any under way has ended (and told of a loss).
        The heartbeat thread itself ends when it next wakes: waiting for that was a
        hand-off to a thread the OS had to schedule, 0.1-16 ms of a run's end at load 8."""
        self._stop.set()
        if self._beating and threading.get_ident() != self._beat_thread:  # not from its own callbacks
            with self._renewing:
                pass

    def _beat(self) -> None:
        self._beat_thread = threading.get_ident()
        while not self._stop.wait(self._ttl / 3):
            with self._renewing:
                if self._stop.is_set() or not self._renewed():
                    return

    def _renewed(self) -> bool:
        """Renew (three times per time to live, so one slow renewal does not lose the
        lease); False once the lease is lost, after telling the callbacks."""
        try:
            if self._store.renew_lease(self._experiment.id, self.shard.index, self._token, self._ttl):
                return True
        except Exception:  # a busy database: the next beat tries again, well before expiry
            return True
        self.lost = True
        for callback in self._on_lost:
            callback()
        return False

    def _what(self) -> str:
        name = repr(self._experiment.name)
        return f"experiment {name}" if self.shard.count == 1 else f"shard {self.shard} of experiment {name}"

    def _held_message(self, held: Lease) -> str:
        until = datetime.fromtimestamp(held.expires_at, timezone.utc).strftime("%H:%M:%S UTC")
        return (
            f"{self._what()} is being run by {held.holder} (its lease is renewed while it runs; it "
            f"expires at {until} unless renewed). Wait for it with --wait (wait_for_lease=True), "
            "or stop that process; a killed holder's lease is taken over once it expires."
        )

    def _lost_message(self) -> str:
        return (
            f"{self._what()}: this process's lease expired (no renewal for {self._ttl:g} s: the "
            "process was suspended or the store unreachable) and another process took the shard "
            "over; the rows it stored before are kept, and it wrote nothing after (its writes "
            f"were refused), nor changed the experiment's status. Raise {_TTL_VARIABLE} if this recurs."
        )
