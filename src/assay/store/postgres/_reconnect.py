"""Riding out a PostgreSQL restart: a call whose connection was lost (the server
restarted, a backend was terminated, the network dropped) reconnects and runs again.

Only calls that are safe to run twice are retried: reads, and the writes of a run that
are idempotent (a status, the figures, the lease calls, which name their token), or
checked first: a batch of rows whose commit was cut off may have landed, so before it
is written again, its first row is looked for. Waits double from 50 ms to 1 s; after
``ASSAY_PG_RECONNECT_S`` seconds (default 30) without a connection, the call fails with
``StorageFault``, saying what happened and how to resume.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any, TypeVar

from assay.errors import StorageFault, StoreError

__all__ = ["RETRIED", "is_lost", "reconnect_seconds", "with_reconnect"]

T = TypeVar("T")

#: ``Store`` calls run again on a new connection when theirs was lost
RETRIED = (
    # reads
    "get_experiment",
    "list_experiments",
    "get_dataset",
    "count_examples",
    "list_examples",
    "load_stats",
    "count_rows",
    "load_rows",
    "load_row_values",
    "completed_keys",
    "list_leases",
    "load_summary_results",
    "has_run",
    "examples_page",
    "read_attachment",
    "get_traced_run",
    "list_traced_runs",
    # idempotent writes of a run
    "write_stats",
    "finish_experiment",
    "reopen_experiment",
    "take_lease",
    "renew_lease",
    "release_lease",
    "finish_shard",
    "replace_summary_results",
    "discard_failed_runs",
)
_FIRST_WAIT_S, _LONGEST_WAIT_S = 0.05, 1.0


class _Unreachable(StoreError):  # internal: retried, or turned into StorageFault
    """A new connection could not be opened (the server is down or restarting)."""


def reconnect_seconds() -> float:
    text = os.environ.get("ASSAY_PG_RECONNECT_S", "").strip()
    try:
        seconds = float(text) if text else 30.0
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:
        raise StoreError(f"ASSAY_PG_RECONNECT_S={text!r}: give the seconds to keep reconnecting, e.g. 30")
    return seconds


def with_reconnect(
    call: Callable[[], T],
    lost: Callable[[BaseException], bool],
    drop: Callable[[], None],
    *,
    seconds: float,
    where: str,
    landed: Callable[[], bool] | None = None,
) -> T | None:
    """``call()``, again on a new connection while ``lost(exc)`` says the last one was
    lost; ``drop()`` forgets it. ``landed()``: whether an attempt cut off committed
    anyway (then None is returned, not run again)."""
    deadline: float | None = None
    wait = _FIRST_WAIT_S
    while True:
        try:
            if deadline is not None and landed is not None and landed():
                return None
            return call()
        except Exception as exc:
            if not lost(exc):
                raise
            drop()
            deadline = deadline if deadline is not None else time.monotonic() + seconds
            if time.monotonic() >= deadline:
                raise StorageFault(_gave_up(where, seconds, exc)) from exc
            time.sleep(wait)
            wait = min(_LONGEST_WAIT_S, 2 * wait)


def _gave_up(where: str, seconds: float, exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (
        f"lost the connection to the PostgreSQL store at {where} and could not reconnect within "
        f"{seconds:g} s ({text[0] if text else type(exc).__name__}). The rows committed before "
        "are kept: once the server is back, continue with `assay run ... --experiment NAME "
        "--resume` (resume=True); ASSAY_PG_RECONNECT_S sets how long to keep trying."
    )


def is_lost(exc: BaseException, connection: Any) -> bool:
    """Whether ``exc`` came of a lost connection (not of the statement itself)."""
    if isinstance(exc, _Unreachable):
        return True
    import psycopg

    if not isinstance(exc, psycopg.OperationalError):
        return False
    raw = getattr(connection, "raw", None)
    return raw is None or bool(raw.closed) or bool(getattr(raw, "broken", False))
