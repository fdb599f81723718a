"""The rows a run hands to its workers: each (example, repetition) not stored yet, in
data order, made on demand from any thread."""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator

from assay.evaluation._rows import PlannedRow
from assay.evaluation._shard import WHOLE, Shard
from assay.schemas import Example

__all__ = ["RowFeed", "done_keys"]


class RowFeed:
    """The rows to run, made on demand as workers ask: each (example, repetition) not
    stored yet. Examples are read from the store a page at a time, so a million-row
    plan costs no more memory than a small one. Safe to call from any thread. With a
    ``shard``, only its rows (``done`` and ``total`` then count that shard's rows).

    Rows are handed out from a queue of planned rows without a lock (a deque's popleft
    is atomic). The thread that finds the queue running low tops it up (reading the
    plan: maybe a page of examples from the store) while the others go on taking rows;
    a thread waits for it only when the queue is empty. A lock around the plan itself
    made every thread asking while a page was read wait for it: a quarter of 1,024
    latency-bound rows' threads blocked on it, many of them as the ramp started them."""

    _AHEAD = 128  # rows planned at once, at most, unless more threads take them

    def __init__(
        self,
        examples: Iterable[Example],
        repetitions: int,
        done: set[int],
        total: int,
        shard: Shard = WHOLE,
    ) -> None:
        self._plan_left = self._plan(examples, repetitions, done, shard)
        self._ready: deque[PlannedRow] = deque()
        self._planning = threading.Lock()  # held by the one thread reading the plan
        self._planned = 0  # rows moved from the plan to the queue
        self._planned_all = False
        self._most_ahead = self._AHEAD // 2
        # Where the queue is topped up, e.g. the event loop's thread: a row thread that
        # reads the next page (and opens its own connection to the store for it) holds
        # its row back by as long, 1-25 ms among 256 threads. None: the asking thread.
        self.top_up_by: Callable[[Callable[[], None]], None] | None = None
        self._top_up_asked = False
        self._plan_failed: BaseException | None = None
        self._hooks = threading.Lock()  # each hook is taken (and called) once
        self._stopped = False
        self.total = total
        self._to_hand = total - len(done)
        # called once, when at most ``ending_at`` rows are left to hand out (0: none is)
        self.on_ending: Callable[[], None] | None = None
        self.ending_at = 0
        # called once, as the last row is handed out (or none was left): every row still
        # to finish is running
        self.on_empty: Callable[[], None] | None = None

    @staticmethod
    def _plan(
        examples: Iterable[Example], repetitions: int, done: set[int], shard: Shard
    ) -> Iterator[PlannedRow]:
        whole = shard.count == 1
        made = tuple.__new__  # a NamedTuple's own __new__ is Python code; per row, tuple's
        if whole and not done and repetitions == 1:  # the common plan: every example once
            for position, example in enumerate(examples):
                yield made(PlannedRow, (position, example, 0))
            return
        for position, example in enumerate(examples):
            for repetition in range(repetitions):
                index = position * repetitions + repetition
                if (whole or shard.holds(index)) and (not done or index not in done):
                    yield made(PlannedRow, (position, example, repetition))

    @property
    def remaining(self) -> int:
        """Rows not handed out yet. Read without a lock: ``_planned`` grows only after
        the queue did, and is read first, so this is never below the true count."""
        return self._to_hand - (self._planned - len(self._ready))

    def next(self) -> PlannedRow | None:
        row = None
        if not self._stopped:
            try:
                row = self._ready.popleft()
            except IndexError:
                row = self._next_planned()
            if len(self._ready) <= self._ahead() and not self._planned_all:
                self._top_up_ahead(holding=row is not None)
        if self.on_ending is not None or self.on_empty is not None:
            self._call_hooks(row is None)
        return row

    def _top_up_ahead(self, holding: bool) -> None:
        """Plan more before they are needed. With a row in hand, a failure of the plan is
        not this thread's to raise (its row would be dropped): it is kept, and raised to
        the next thread that finds the queue empty."""
        if not holding:
            self._top_up()
            return
        try:
            self._top_up()
        except Exception:  # noqa: BLE001 - kept in _plan_failed by the planning
            pass

    def _top_up(self) -> None:
        """The queue runs low: ask ``top_up_by`` to plan more (once until it did), or
        plan here, unless another thread is at it already."""
        if self.top_up_by is not None:
            if not self._top_up_asked:
                self._top_up_asked = True  # two threads asking at once: planned twice, harmless
                self.top_up_by(self._top_up_now)
        elif self._planning.acquire(blocking=False):
            try:
                self._plan_more(self._ahead())
            finally:
                self._planning.release()

    def _top_up_now(self) -> None:
        try:
            with self._planning:
                if len(self._ready) <= self._ahead() and not self._planned_all:
                    self._plan_more(self._ahead())
        except Exception:  # noqa: BLE001 - kept by _plan_more for the threads asking next (an
            # interrupt goes on to the loop, which stops the run)
            pass
        finally:
            self._top_up_asked = False

    def plan_ahead(self, rows: int) -> None:
        """Have ``rows`` rows planned (at most the whole plan), for threads about to
        start: they then find their first rows ready instead of each waiting in turn
        for the one reading a page of examples. Later the queue is topped up by as
        many at once: a row a thread (each thread's next row is ready while one reads
        the next page, even when all of them ask at once)."""
        self._most_ahead = max(self._most_ahead, rows)
        self._fill(rows)

    def plan_ahead_quietly(self, rows: int) -> None:
        """Have up to ``rows`` rows planned for threads that may start (a ramp's first
        wave), from a caller that cannot fail (a callback on the event loop): a plan that
        fails is kept, and fails the threads asking next. Later top-ups keep their size
        (the threads may never come: rows that compute keep one or two)."""
        try:
            self._fill(rows)
        except Exception:  # noqa: BLE001 - kept by _plan_more for the threads asking next (an
            # interrupt goes on to the loop, which stops the run)
            pass

    def _fill(self, rows: int) -> None:
        with self._planning:
            while len(self._ready) < rows and not self._planned_all:
                self._plan_more(rows - len(self._ready))

    def _ahead(self) -> int:
        """How many rows to plan at once: as many as were planned so far (one at first:
        the first row waits for its own example only), at most ``_AHEAD`` or twice as
        many as were planned ahead for threads at once. Twice: a top-up that reads a
        page lets the GIL go, and among 256 threads takes it back only after ~20 ms of
        their rows; with one row a thread ready, 36 of them waited for it."""
        return min(2 * self._most_ahead, max(1, self._planned))

    def _next_planned(self) -> PlannedRow | None:
        """The queue is empty: wait for the thread reading the plan, or read it."""
        with self._planning:
            while True:
                try:
                    return self._ready.popleft()
                except IndexError:
                    if self._planned_all or self._stopped:
                        return None
                    self._plan_more(self._ahead())

    def _plan_more(self, wanted: int) -> None:
        """Move the plan's next ``wanted`` rows to the queue. Called with ``_planning`` held.
        A plan that failed (the store could not be read) fails every thread asking after
        it, wherever it was read: the rows it did not plan are not an empty rest."""
        if self._plan_failed is not None:
            raise self._plan_failed
        try:
            rows = list(itertools.islice(self._plan_left, wanted))
        except BaseException as exc:
            self._plan_failed = exc
            raise
        self._ready.extend(rows)
        self._planned += len(rows)  # after the queue grew: see ``remaining``
        if len(rows) < wanted:
            self._planned_all = True

    def _call_hooks(self, none_left: bool) -> None:
        left = self.remaining
        ending = empty = None
        with self._hooks:
            if self.on_ending is not None and (none_left or left <= self.ending_at):
                ending, self.on_ending = self.on_ending, None
            if self.on_empty is not None and (none_left or left <= 0):
                empty, self.on_empty = self.on_empty, None
        if ending is not None:
            ending()
        if empty is not None:
            empty()

    def stop(self) -> None:
        self._stopped = True

    @property
    def exhausted(self) -> bool:
        return self._stopped or self.remaining <= 0


def done_keys(keys: Iterable[tuple[int, int]], repetitions: int) -> set[int]:
    """Stored (position, repetition) pairs as compact integers, for ``RowFeed``."""
    return {position * repetitions + repetition for position, repetition in keys}
