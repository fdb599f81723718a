"""The one writer: finished rows go to the store in batches, from a single thread.

Workers never touch the database. A batch is written when it is large or old, so a
crash loses at most the rows finished in the last fraction of a second.
"""

from __future__ import annotations

import queue
import threading
import time
import uuid
from typing import Optional

from assay.store.base import Store
from assay.store.records import ExperimentRow

_STOP = object()


class RowWriter:
    def __init__(
        self, store: Store, experiment_id: uuid.UUID, max_batch: int = 1000, max_delay: float = 0.1
    ) -> None:
        self._store = store
        self._experiment_id = experiment_id
        self._max_batch = max_batch
        self._max_delay = max_delay
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._loop, name="assay-writer", daemon=True)
        self._thread.start()

    def put(self, row: ExperimentRow) -> None:
        self._queue.put(row)

    def close(self) -> None:
        """Flush everything queued and stop; re-raise a write failure."""
        self._queue.put(_STOP)
        self._thread.join()
        if self._error is not None:
            raise self._error

    def _loop(self) -> None:
        stopping = False
        while not stopping:
            batch, stopping = self._next_batch()
            if batch and self._error is None:
                try:
                    self._store.write_rows(self._experiment_id, batch)
                except BaseException as exc:  # surfaced by close()
                    self._error = exc

    def _next_batch(self) -> tuple[list[ExperimentRow], bool]:
        first = self._queue.get()
        if first is _STOP:
            return [], True
        batch = [first]
        deadline = time.monotonic() + self._max_delay
        while len(batch) < self._max_batch:
            timeout = deadline - time.monotonic()
            if timeout <= 0:
                break
            try:
                item = self._queue.get(timeout=timeout)
            except queue.Empty:
                break
            if item is _STOP:
                return batch, True  # type: ignore[return-value]
            batch.append(item)
        return batch, False  # type: ignore[return-value]
