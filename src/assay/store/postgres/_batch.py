"""A run's batch on PostgreSQL in six round trips, whatever its size, its rows sent as
the row threads formatted them (``_copy_text``).

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
import threading
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
from assay.store.postgres._copy_text import CopyReady
from assay.store.records import ExperimentStats
from assay.store.sqlite import _rows as rows

__all__ = ["ColumnsBuildingWriter", "write_batch"]


class ColumnsBuildingWriter:
    """A run's batches, written in its writer thread; the last marks the experiment's
    metric columns pending in its own transaction, and they are built by a thread of their own
    (with its own connection), so that the run does not wait for them, as SQLite's
    writer process builds them. ``finish_experiment`` sees the mark and leaves the build
    to that thread; a build that fails (or is cut short by ``close``) leaves the mark
    pending, and the first comparison of the experiment builds the columns instead."""

    def __init__(self, store: Any, experiment_id: uuid.UUID, fence: Fence | None) -> None:
        self._store, self._experiment_id, self._fence = store, experiment_id, fence
        self._mark_columns = False  # the next batch is a finished run's last
        self._columns_marked = False  # committed with it

    def expect(self, rows: int) -> None:
        pass

    def write(self, prepared: Sequence[Any], stats: ExperimentStats | None) -> None:
        marking = self._mark_columns
        self._store.write_batch(self._experiment_id, prepared, stats, self._fence, mark_columns=marking)
        self._columns_marked = marking

    def ending(self, build_columns: bool) -> None:
        self._mark_columns = build_columns

    def close(self, *, build_columns: bool = False) -> None:
        if not build_columns:
            return
        experiment_id = str(self._experiment_id)
        if not self._columns_marked:  # else marked with the last batch: no transaction of its own
            with self._store.transaction() as conn:
                columns.mark_pending(conn, experiment_id)
        # not a daemon: an interpreter that exits waits for the build
        threading.Thread(target=self._build, args=(experiment_id,), name="assay-columns").start()

    def _build(self, experiment_id: str) -> None:
        try:
            columns.build_marked(self._store, experiment_id)
        except Exception:  # noqa: BLE001, S110 - see the class docstring
            pass
        finally:
            self._store.drop_connection()


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
        if not prepared:  # a run's end with nothing queued: its final figures alone
            pass
        elif all(type(item) is CopyReady for item in prepared):
            conn.copy_text("runs", RUN_COLUMNS + ", failed", b"".join([item.run_text for item in prepared]))
            conn.copy_text("results", RESULT_COLUMNS, b"".join([item.results_text for item in prepared]))
        else:
            rows.insert_encoded(sqlite_like, [codec.encoded(item) for item in prepared])
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
