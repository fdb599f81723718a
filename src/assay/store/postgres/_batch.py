"""A run's batch on PostgreSQL in six round trips, whatever its size, written by the run
itself: before its writer process is ready, in a small run, or when the process is gone
(``_writer``; the process sends the same transaction as one query). Its rows are
encoded and formatted as ``COPY`` text here (``_copy_text``).

The batch is what SQLite's writer commits (``sqlite._write_batch_on``): the lease fence,
the rows, the invalidation of what the rows make stale, the experiment's figures, one
transaction. Sent a statement at a time, that is a dozen round trips, each a wait for
the server to be scheduled, then for this thread (on a loaded machine, most of a
batch's time). Here the statements around the two ``COPY`` streams travel in pipelines:
``BEGIN`` and the fence in one round trip, then each table's ``COPY`` (two: its start,
then its data and end), then the invalidations, the figures and ``COMMIT`` in one. The
fence is checked before any row is sent and its lock held to the commit, as before.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Sequence
from typing import Any, cast

from assay.store import _codec as codec
from assay.store import _columns as columns
from assay.store import fence as fences
from assay.store import text_index
from assay.store._row_text import RESULT_COLUMNS, RUN_COLUMNS
from assay.store.fence import Fence
from assay.store.postgres._conn import PGConnection
from assay.store.postgres._copy_text import CopyReady, copy_ready
from assay.store.records import ExperimentStats
from assay.store.sqlite import _rows as rows

__all__ = ["write_batch"]


def write_batch(
    conn: PGConnection,
    experiment_id: uuid.UUID,
    prepared: Sequence[Any],
    stats: ExperimentStats | None,
    fence: Fence | None,
    mark_columns: bool = False,
) -> None:
    """Every row of ``prepared`` stored, with ``stats``, or none (an exception says why);
    ``mark_columns``: with the experiment's metric columns marked pending (a finished
    run's last batch)."""
    raw, sqlite_like = conn.raw, cast(Any, conn)  # the row functions take a sqlite3-like one
    touched = [str(experiment_id)]
    try:
        with raw.pipeline():
            raw.execute("BEGIN")
            held = conn.execute(fences.FENCE_SQL, fence.params) if fence is not None else None
        if fence is not None and held is not None and held.fetchone() is None:
            raise fences.LeaseFencedError(fences.refused_message(fence.params))
        # rows the row threads pickled (``prepare_row``) are encoded here when no writer
        # process takes them (``_writer``): at a run's start, a small run, a fallback
        ready = [item if type(item) is CopyReady else copy_ready(codec.encoded(item)) for item in prepared]
        copied = [item for item in ready if isinstance(item, CopyReady)]
        if not ready:  # a run's end with nothing queued: its final figures alone
            pass
        elif len(copied) == len(ready):
            conn.copy_text("runs", RUN_COLUMNS + ", failed", b"".join([item.run_text for item in copied]))
            conn.copy_text("results", RESULT_COLUMNS, b"".join([item.results_text for item in copied]))
        else:
            rows.insert_encoded(sqlite_like, ready)
        with raw.pipeline():
            columns.invalidate(conn, touched)
            text_index.invalidate(conn, touched)
            if stats is not None:
                rows.write_stats(sqlite_like, experiment_id, stats)
            if mark_columns:
                columns.mark_pending(conn, str(experiment_id))
            raw.execute("COMMIT")
    except BaseException:
        _roll_back(raw)
        raise


def _roll_back(raw: Any) -> None:
    """End a transaction the batch left open (a lost connection has none left to end)."""
    import psycopg

    if raw.closed or raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
        return
    with contextlib.suppress(psycopg.Error):
        raw.execute("ROLLBACK")
