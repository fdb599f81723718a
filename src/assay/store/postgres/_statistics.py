"""The planner's statistics of the rows a run has just written, refreshed before they are read.

PostgreSQL plans a query by the statistics it last gathered of each table, and a run's
rows arrive faster than autovacuum gathers them again (it looks once a minute, after 10%
of a table changed). Planned for the empty experiment the statistics still describe, a
page of a 100,000-row experiment's rows (a summary evaluator reads them so, 1,000 at a
time, in data order) was read by collecting every row after the page's start and sorting
them, not by walking the index to the page's end: each page cost more than the last,
the whole read quadratic (12.7 s of the server's time at 100,000 rows). So a store that
wrote an experiment's rows refreshes the statistics of ``runs`` and ``results``
(``ANALYZE``, which samples ~30,000 rows whatever a table's size) before it first reads
them back (not for the build of their columns, which walks an index either way), once
enough were written since: of the columns the
rows are found by, from a sample of 3,000 rows (130 ms at 100,000 rows, against 1.1 s for
every column from the default 30,000; the page's plan is the same). The refresh is
an optimisation, never a read's failure: a table another session holds (a VACUUM, an
ANALYZE) is skipped, not waited for, and a refresh that fails is tried at a later read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["ANALYZE_AFTER_ROWS", "ANALYZE_SQL", "WrittenRows"]

#: rows written since the last refresh from which reads refresh the statistics first
ANALYZE_AFTER_ROWS = 2_000
ANALYZE_SQL = (  # in one transaction: the sample's size is the transaction's setting
    "SET LOCAL default_statistics_target = 10",
    "ANALYZE (SKIP_LOCKED) runs (experiment_id, position, repetition), results (experiment_id, key, run_id)",
)


class WrittenRows:
    """Rows this store wrote per experiment since it last refreshed the statistics."""

    def __init__(self, threshold: int = ANALYZE_AFTER_ROWS) -> None:
        self._threshold = threshold
        self._rows: dict[str, int] = {}
        self._lock = threading.Lock()

    def add(self, experiment_id: str, rows: int) -> None:
        with self._lock:
            self._rows[experiment_id] = self._rows.get(experiment_id, 0) + rows

    def before_reading(self, experiment_id: str, analyze: Callable[[], None]) -> None:
        """``analyze()`` first if the experiment grew by the threshold since the last (the
        statistics are the tables', so every experiment's count starts again). Claimed
        under the lock, run outside it: the run's writers counting their batches meanwhile
        do not wait for it. One that fails leaves the counts for a later read."""
        if self._rows.get(experiment_id, 0) < self._threshold:
            return
        with self._lock:
            if self._rows.get(experiment_id, 0) < self._threshold:
                return  # refreshed meanwhile
            claimed, self._rows = self._rows, {}
        try:
            analyze()
        except Exception:  # noqa: BLE001 - the read goes on with the statistics it has
            with self._lock:
                for key, rows in claimed.items():
                    self._rows[key] = self._rows.get(key, 0) + rows
