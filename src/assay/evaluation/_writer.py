"""The one writer: finished rows go to the store in bounded batches, from a single thread.

Workers never touch the database: they prepare their row (``store.prepare_row``) and its
tally, and append both to a bounded queue. A batch is due as soon as the oldest queued
row has waited ``max_delay`` seconds or ``max_batch`` rows are queued, whichever comes
first; it takes every row queued by the time the writer is free, at most ``max_pending``
(two batches by default: the next one fills while one is committed). When the queue holds
``max_pending`` rows, or the rows queued and being written ``max_pending + max_batch``,
workers wait (backpressure) instead of computing rows that would pile up in memory (the
rows a store's writer took and has not confirmed committed count as being written). So a
crash loses at most the rows of the last interval plus those in flight, never more than
``max_pending + max_batch`` (1,500 by default), whatever the size of the experiment.

A store that keeps up commits batches of ``max_batch`` rows. One that fell behind (the
machine is busy, a commit waited on the disk) takes up to ``max_pending`` at once, so that
each commit's fixed cost (its fsync, its round trip to a writer process) is shared by
more rows and it catches up with fewer commits. The run's end is one transaction too:
whatever is queued when the last row is in (nothing, maybe), with the final figures, so
that the run waits for one commit's fixed cost, not one per batch plus one more for the
figures.

Each batch carries the experiment's counts (exact for the rows committed with them);
the per-metric figures ride along every few seconds, at most ~5% of the writer's time.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from assay.errors import StoreWriteError
from assay.evaluation._tally import RowTally, Tally, tally_row
from assay.store.base import Store
from assay.store.records import ExperimentRow, ExperimentStats

if TYPE_CHECKING:
    from assay.store.fence import Fence

_STATS_EVERY_S = 1.0
_STATS_SHARE = 20  # figures at most every 20x the time they take to compute


class RowWriter:
    # Measured on the core benchmark (10,000 rows, 2 CPUs): 1,000-row batches with room
    # for one made the row workers wait ~80 ms a run for the writer; 500 with room for two
    # ~30 ms, and the run was ~6% faster.
    DEFAULT_BATCH = 500
    QUEUED_BATCHES = 2
    DEFAULT_PENDING = QUEUED_BATCHES * DEFAULT_BATCH

    def __init__(
        self,
        store: Store,
        experiment_id: uuid.UUID,
        tally: Tally | None = None,
        *,
        max_batch: int = DEFAULT_BATCH,
        max_delay: float = 0.1,
        max_pending: int | None = None,
        figures: bool = True,
        expected_rows: int = 0,
        fence: Fence | None = None,
    ) -> None:
        self._store = store
        self._experiment_id = experiment_id
        self.tally = tally if tally is not None else Tally()
        self.max_batch = max_batch
        self._max_delay = max_delay
        self._max_pending = max_pending or self.QUEUED_BATCHES * max_batch
        self._max_unstored = self._max_pending + max_batch  # queued and being written
        self._writing = 0  # rows being written: the batch taken, and those handed to the store unconfirmed
        self._keep_figures = figures  # False: rows only (a shard's tally is not the experiment's)
        self._pending: deque[tuple[float, Any, RowTally]] = deque()
        self._cond = threading.Condition()
        self._closing = False
        self._finished = False
        self._error: BaseException | None = None
        self._next_stats = 0.0
        self._final: ExperimentStats | None = None  # the final figures, once stored with the last batch
        self._fence = fence  # every batch, and the final figures, behind the run's lease
        self._batches = store.batch_writer(experiment_id, fence)
        self._expected_rows = expected_rows  # told to the store's writer as this thread starts
        self._thread = threading.Thread(target=self._loop, name="assay-writer", daemon=True)
        self._thread.start()

    def put(self, row: ExperimentRow) -> None:
        """Called from any worker; the encoding happens here, off the writer thread.

        Waits while the queue is full. Raises once a write has failed, so workers stop
        instead of computing rows that could not be stored."""
        self._raise_if_failed()
        prepared, tally = self._store.prepare_row(self._experiment_id, row), tally_row(row)
        with self._cond:
            while self._full() and self._error is None:
                self._cond.wait()
            self._raise_if_failed()
            self._pending.append((time.monotonic(), prepared, tally))
            queued = len(self._pending)
            if queued == 1 or queued == self.max_batch:  # start the clock, or a full batch
                self._cond.notify_all()

    def hurry(self) -> None:
        """The last rows are being computed: commit what is queued whenever the store is
        free (no interval to wait for), so that batches shrink towards the end and
        closing has little left to flush."""
        with self._cond:
            self._max_delay = 0.0
            self._cond.notify_all()

    def close(self, *, finished: bool = False) -> ExperimentStats:
        """Flush everything queued (at most ``max_pending`` rows: the writer kept up), stop,
        and store the final figures. Re-raises a write failure. ``finished``: every row of
        the run was put (no failure or interrupt cut it short), so the store's writer may
        build the experiment's metric columns as it stops."""
        with self._cond:
            self._finished = finished and self._keep_figures  # a shard's rows are not all of them
            self._closing = True
            self._cond.notify_all()
        self._thread.join()
        self._raise_if_failed()
        if self._final is not None:  # committed with the last rows
            return self._final
        stats = self.tally.stats(final=True)
        if self._keep_figures:
            self._store.write_stats(self._experiment_id, stats, self._fence)
        return stats

    def _full(self) -> bool:
        queued = len(self._pending)
        return queued >= self._max_pending or queued + self._writing >= self._max_unstored

    def _raise_if_failed(self) -> None:
        if self._error is not None:
            raise StoreWriteError(f"storing rows failed: {self._error}") from self._error

    def _loop(self) -> None:
        try:
            self._batches.expect(self._expected_rows)
            self._write_until_closed()
        finally:
            # a batch's error may come with the close (a writer that had not read its answer)
            self._surfacing_errors(self._batches.close, build_columns=self._finished and self._error is None)
            # the connection of batches written here: closed now, not by a distant collection
            self._store.drop_connection()

    def _write_until_closed(self) -> None:
        while True:
            batch, last = self._next_batch()
            # the end is a batch even when nothing is queued: it carries the final figures
            if (batch or (last and self._keep_figures)) and self._error is None:
                self._surfacing_errors(self._write, batch, last)
            if last and self._error is None:
                self._surfacing_errors(self._batches.flush)
            with self._cond:
                # rows handed to the store, their commit not confirmed, still count as written
                self._writing = self._batches.unconfirmed_rows if self._error is None else 0
                self._cond.notify_all()  # room for workers waiting on the rows being written
            if last:
                return

    def _surfacing_errors(self, step: Callable[..., None], *args: Any, **kwargs: Any) -> None:
        try:
            step(*args, **kwargs)
        except BaseException as exc:  # surfaced by put() and close(): the first one
            with self._cond:
                self._error = self._error or exc

    def _next_batch(self) -> tuple[list[tuple[float, Any, RowTally]], bool]:
        """Wait until a batch is due (or the run closes); take all that is queued."""
        with self._cond:
            while not self._closing and len(self._pending) < self.max_batch:
                if not self._pending:
                    self._cond.wait()
                    continue
                remaining = self._pending[0][0] + self._max_delay - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            take = len(self._pending)
            batch = [self._pending.popleft() for _ in range(take)]
            self._writing += take  # beside those handed over, not confirmed yet
            self._cond.notify_all()  # room in the queue: wake waiting workers
            return batch, self._closing and not self._pending

    def _write(self, batch: list[tuple[float, Any, RowTally]], last: bool) -> None:
        """``last``: the run's last batch (closing, nothing queued after it), which
        carries the final figures."""
        for _, _, row in batch:
            self.tally.add(row)
        figures = None
        if self._keep_figures:
            figures = self.tally.stats(final=True) if last else self._figures()
        if last:
            self._batches.ending(build_columns=self._finished)
        self._batches.write([prepared for _, prepared, _ in batch], figures)
        if last:
            self._final = figures

    def _figures(self) -> ExperimentStats:
        now = time.monotonic()
        if now < self._next_stats or self._closing:  # closing: the final figures follow
            return self.tally.counts()
        stats = self.tally.stats()
        cost = time.monotonic() - now
        self._next_stats = now + max(_STATS_EVERY_S, _STATS_SHARE * cost)
        return stats
