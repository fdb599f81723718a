"""Deadlines for SQLite queries: one background thread interrupts connections that overrun.

``sqlite3.Connection.interrupt()`` is safe from another thread and costs the
query nothing until it fires, unlike a progress handler, which calls back into
Python (and takes the GIL) every few thousand VM steps.
"""

from __future__ import annotations

import heapq
import itertools
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Deadline:
    """One watched query; ``expired`` tells whether the watchdog interrupted it."""

    def __init__(self, connection: sqlite3.Connection, at: float) -> None:
        self.connection = connection
        self.at = at
        self.active = True
        self.expired = False


class _Watchdog:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._queue: list[tuple[float, int, Deadline]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    @contextmanager
    def deadline(self, connection: sqlite3.Connection, seconds: float) -> Iterator[Deadline]:
        """Interrupt ``connection`` if the block is still running after ``seconds``."""
        watched = Deadline(connection, time.monotonic() + seconds)
        with self._lock:
            heapq.heappush(self._queue, (watched.at, next(self._order), watched))
            self._ensure_thread()
            self._changed.notify()
        try:
            yield watched
        finally:
            with self._lock:  # under the lock, so no interrupt can land after the block
                watched.active = False

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="assay-sql-watchdog", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        with self._lock:
            while True:
                while self._queue and not self._queue[0][2].active:
                    heapq.heappop(self._queue)
                if not self._queue:
                    self._changed.wait()
                    continue
                wait = self._queue[0][0] - time.monotonic()
                if wait > 0:
                    self._changed.wait(wait)
                    continue
                _, _, due = heapq.heappop(self._queue)
                due.expired = True
                due.connection.interrupt()


WATCHDOG = _Watchdog()
