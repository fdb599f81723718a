"""Rows as they finish, for ``evaluate(..., blocking=False)``: workers add rows from any
thread; readers iterate (sync or async) while the experiment runs, or wait for its end."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass

from assay.schemas import EvaluationResult
from assay.store.records import ExperimentRecord, ExperimentRow, ExperimentStats


@dataclass
class Outcome:
    """How the experiment ended: its final record, rows in data order (read from the store
    as needed), summary results and final figures."""

    record: ExperimentRecord
    rows: Sequence[ExperimentRow]
    summary: list[EvaluationResult]
    stats: ExperimentStats | None = None


class RowStream:
    def __init__(self) -> None:
        self._arrived: list[ExperimentRow] = []
        self._changed = threading.Condition()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self.outcome: Outcome | None = None
        self.error: BaseException | None = None
        self.done = False

    def add(self, row: ExperimentRow) -> None:
        with self._changed:
            self._arrived.append(row)
            self._changed.notify_all()
        self._wake_async()

    def finish(self, outcome: Outcome | None, error: BaseException | None = None) -> None:
        with self._changed:
            self.outcome, self.error, self.done = outcome, error, True
            self._changed.notify_all()
        self._wake_async()

    @property
    def ended_well(self) -> bool:
        """Finished without an error: readers can take the outcome, rows in data order."""
        return self.done and self.error is None

    @property
    def arrived(self) -> int:
        return len(self._arrived)

    def wait(self, timeout: float | None = None) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self.done, timeout)

    def __iter__(self) -> Iterator[ExperimentRow]:
        """Rows in the order they finished, blocking for the next until the end."""
        index = 0
        while True:
            with self._changed:
                self._changed.wait_for(self._beyond(index))
                batch, finished = self._arrived[index:], self.done
            yield from batch
            index += len(batch)
            if finished and index >= len(self._arrived):
                return

    def _beyond(self, index: int) -> Callable[[], bool]:
        return lambda: self.done or index < len(self._arrived)

    async def aiter(self) -> AsyncIterator[ExperimentRow]:
        index = 0
        while True:
            loop = asyncio.get_running_loop()
            future: asyncio.Future[None] = loop.create_future()
            with self._changed:
                batch, finished = self._arrived[index:], self.done
                if not batch and not finished:
                    self._waiters.append((loop, future))
            if not batch and not finished:
                await future
                continue
            for row in batch:
                yield row
            index += len(batch)
            if finished and index >= len(self._arrived):
                return

    async def wait_async(self) -> None:
        async for _ in self.aiter():
            pass

    def _wake_async(self) -> None:
        with self._changed:
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            loop.call_soon_threadsafe(_resolve, future)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
