"""The one writer: finished rows go to the store in batches, from a single thread.

Workers never touch the database: they encode their row (``store.prepare_row``) and
append it to a list. The writer wakes every ``max_delay`` seconds (or when a batch is
full) and writes what is there in one transaction, so a crash loses at most the rows
of the last fraction of a second. Waking per batch, not per row, keeps the writer from
fighting the workers for the GIL.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

from assay.store.base import Store
from assay.store.errors import StoreError
from assay.store.records import ExperimentRow


class StoreWriteError(StoreError):
    """A batch of rows could not be written; rows stored before it are kept."""


class RowWriter:
    def __init__(
        self, store: Store, experiment_id: uuid.UUID, max_batch: int = 2000, max_delay: float = 0.1
    ) -> None:
        self._store = store
        self._experiment_id = experiment_id
        self._max_batch = max_batch
        self._max_delay = max_delay
        self._pending: list[Any] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closing = False
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name="assay-writer", daemon=True)
        self._thread.start()

    def put(self, row: ExperimentRow) -> None:
        """Called from any worker; the encoding happens here, off the writer thread.

        Raises once a write has failed, so workers stop instead of computing rows that
        could not be stored."""
        if self._error is not None:
            raise StoreWriteError(f"storing rows failed: {self._error}") from self._error
        prepared = self._store.prepare_row(self._experiment_id, row)
        with self._lock:
            self._pending.append(prepared)
            full = len(self._pending) >= self._max_batch
        if full:
            self._wake.set()

    def close(self) -> None:
        """Flush everything queued and stop; re-raise a write failure."""
        self._closing = True
        self._wake.set()
        self._thread.join()
        if self._error is not None:
            raise StoreWriteError(f"storing rows failed: {self._error}") from self._error

    def _loop(self) -> None:
        while True:
            self._wake.wait(self._max_delay)
            self._wake.clear()
            closing = self._closing
            with self._lock:
                batch, self._pending = self._pending, []
            if batch and self._error is None:
                try:
                    self._store.write_prepared(batch)
                except BaseException as exc:  # surfaced by close()
                    self._error = exc
            if closing:
                return
