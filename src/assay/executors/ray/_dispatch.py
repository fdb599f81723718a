"""The driver's side of a Ray run: batches out to the workers, rows back to ``accept``.

Each worker holds up to ``DEPTH`` batches (one running, the next queued beside it, so
it never waits for a round trip). A batch whose worker died (killed, out of memory, its
node lost) is sent again, whole, to another worker when there is one (the one it failed on
may still be restarting, and would fail it again at once); its rows reached nobody,
since rows are accepted only from a batch that came back, so nothing is lost or stored
twice. A target or evaluator exception is not a failure here: it is in the row.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assay.errors import RayExecutorError
from assay.evaluation.executor import PlannedRow, RowFeed
from assay.executors.ray._batches import Batch, BatchSizing
from assay.executors.ray._worker import BatchResult
from assay.store.records import ExperimentRow

DEPTH = 2


@dataclass
class Shipment:
    """What every batch call carries: the experiment's key and the pipeline's reference."""

    key: str
    pipeline_ref: Any


class Dispatcher:
    """One experiment's batches: sent, awaited, accepted in the order of their rows,
    re-sent when their worker died. ``pids`` is updated as batches report them."""

    def __init__(
        self,
        workers: list[Any],
        shipment: Shipment,
        feed: RowFeed,
        accept: Callable[[ExperimentRow], None],
        sizing: BatchSizing,
        max_attempts: int,
        pids: list[int | None],
    ) -> None:
        self._workers = workers
        self._shipment = shipment
        self._feed = feed
        self._accept = accept
        self._sizing = sizing
        self._max_attempts = max_attempts
        self._retries: deque[Batch] = deque()
        self._busy = [0] * len(workers)
        self._in_flight: dict[asyncio.Future[Any], tuple[Batch, int]] = {}
        self.resent = 0  # batches sent again after their worker died
        self._pids = pids  # each worker's process, as its last batch reported it

    async def run(self) -> None:
        from ray.exceptions import RayTaskError

        try:
            while True:
                self._fill()
                if not self._in_flight:
                    return
                done, _ = await asyncio.wait(self._in_flight, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    batch, worker = self._in_flight.pop(future)
                    self._busy[worker] -= 1
                    try:
                        result: BatchResult = future.result()
                    except RayTaskError as exc:  # raised inside the worker, outside any row
                        raise RayExecutorError(_task_failure(exc)) from None
                    except Exception as exc:
                        if not _worker_lost(exc):
                            raise
                        self._resend(batch, worker, exc)
                        continue
                    self._finish(batch, worker, result)
        finally:
            for future in self._in_flight:
                future.cancel()  # rows of an abandoned run: their results are dropped

    def _fill(self) -> None:
        for worker in range(len(self._workers)):
            while self._busy[worker] < DEPTH:
                batch = self._next_batch(worker)
                if batch is None:
                    break  # (another worker may still take a batch that failed on this one)
                self._send(batch, worker)

    def _next_batch(self, worker: int) -> Batch | None:
        """A batch that failed elsewhere, else new rows. With nothing in flight, some
        worker is free besides the one any retry failed on, so no retry waits forever."""
        for batch in self._retries:
            if batch.failed_on != worker or len(self._workers) == 1:
                self._retries.remove(batch)
                return batch
        slots = DEPTH * len(self._workers)
        size = self._sizing.size(self._feed.remaining, slots)
        rows: list[PlannedRow] = []
        while len(rows) < size and (planned := self._feed.next()) is not None:
            rows.append(planned)
        return Batch(rows) if rows else None

    def _send(self, batch: Batch, worker: int) -> None:
        ref = self._workers[worker].run_batch.remote(
            self._shipment.key, [self._shipment.pipeline_ref], batch.rows
        )
        self._in_flight[asyncio.wrap_future(ref.future())] = (batch, worker)
        self._busy[worker] += 1

    def _resend(self, batch: Batch, worker: int, exc: BaseException) -> None:
        batch.attempts += 1
        if batch.attempts >= self._max_attempts:
            first = batch.rows[0]
            raise RayExecutorError(
                f"{batch.attempts} workers died running a batch of {len(batch.rows)} rows "
                f"(from example {first.example.id}, repetition {first.repetition}); the last "
                f"error: {type(exc).__name__}: {exc}. Rows finished before it are stored: "
                f"resume the experiment to run the rest"
            ) from exc
        batch.failed_on = worker
        self._retries.append(batch)
        self.resent += 1

    def _finish(self, batch: Batch, worker: int, result: BatchResult) -> None:
        self._sizing.observe(len(batch.rows), result.seconds)
        self._pids[worker] = result.pid
        for planned, (run, results) in zip(batch.rows, result.rows):
            self._accept(
                ExperimentRow(
                    run=run,
                    example=planned.example,
                    repetition=planned.repetition,
                    position=planned.position,
                    results=results,
                )
            )


def _worker_lost(exc: BaseException) -> bool:
    """The worker process or its node went away (the batch may be sent again)."""
    from ray import exceptions

    lost = (
        exceptions.RayActorError,
        exceptions.WorkerCrashedError,
        exceptions.NodeDiedError,
        exceptions.ObjectLostError,
        exceptions.LocalRayletDiedError,
    )
    return isinstance(exc, lost)


def _task_failure(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None) or exc
    hint = ""
    if isinstance(cause, (ModuleNotFoundError, ImportError, AttributeError)):
        hint = (
            " (the Ray workers import the modules that define the target and evaluators: "
            "install them on every node, pass RayExecutor(runtime_env={'working_dir': ...}), "
            "or define them in the script you run)"
        )
    return f"a Ray worker failed outside any row: {type(cause).__name__}: {cause}{hint}"
