"""The one async core: plan (example x repetition), skip what is stored, run the rest under
a concurrency limit, stream rows to one writer, then run the summary evaluators."""

from __future__ import annotations

import asyncio
import operator
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from assay.errors import AssayError
from assay.evaluation._binding import SummaryEvaluator, row_arguments
from assay.evaluation._rows import PlannedRow, RowPipeline, in_thread
from assay.evaluation._writer import RowWriter
from assay.schemas import EvaluationResult
from assay.store.base import Store
from assay.store.records import ExperimentRecord, ExperimentRow

_RAMP_TICK_S = 0.005


class RowFailedError(AssayError, RuntimeError):
    """With ``error_handling="raise"``: the first target or evaluator error."""


@dataclass
class RunSettings:
    max_concurrency: int
    raise_on_error: bool
    on_row: Callable[[ExperimentRow], None]


def plan_rows(examples: Sequence[Any], repetitions: int, done: set[tuple[str, int]]) -> list[PlannedRow]:
    return [
        PlannedRow(position, example, repetition)
        for position, example in enumerate(examples)
        for repetition in range(repetitions)
        if not done or (str(example.id), repetition) not in done
    ]


class _Feed:
    """The planned rows, handed out one at a time to workers on any thread; stoppable."""

    def __init__(self, planned: list[PlannedRow]) -> None:
        self._rows = iter(planned)
        self._lock = threading.Lock()
        self._stopped = False

    def next(self) -> PlannedRow | None:
        with self._lock:
            return None if self._stopped else next(self._rows, None)

    def stop(self) -> None:
        self._stopped = True

    @property
    def exhausted(self) -> bool:
        return self._stopped or operator.length_hint(self._rows) == 0


async def run_rows(
    pipeline: RowPipeline, planned: list[PlannedRow], store: Store,
    experiment: ExperimentRecord, settings: RunSettings,
) -> list[ExperimentRow]:
    """Run ``planned`` rows; every finished row is written before this returns."""
    finished: list[ExperimentRow] = []
    writer = RowWriter(store, experiment.id)

    def accept(row: ExperimentRow) -> None:
        writer.put(row)
        finished.append(row)
        settings.on_row(row)
        if settings.raise_on_error:
            _raise_first_error(row)

    workers = max(1, min(settings.max_concurrency, len(planned)))
    feed = _Feed(planned)
    try:
        # The pool's exit waits for rows still running in its threads (after a failure or
        # a cancel, the feed is stopped first), so the writer closes after their last put.
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="assay-row") as pool:
            try:
                if pipeline.all_sync:
                    await _run_in_threads(pipeline, feed, pool, accept, workers)
                else:
                    tasks = [_loop_worker(pipeline, feed, pool, accept) for _ in range(workers)]
                    await _gather_or_fail([asyncio.ensure_future(t) for t in tasks])
            finally:
                feed.stop()
    finally:
        writer.close()
    return finished


async def _loop_worker(
    pipeline: RowPipeline, feed: _Feed, pool: ThreadPoolExecutor,
    accept: Callable[[ExperimentRow], None],
) -> None:
    """Some part is async: await it on the loop; sync parts hop to the pool."""
    while (planned := feed.next()) is not None:
        accept(await pipeline.run_async(planned, pool))


class _Load:
    """How the row threads spend their time: computing (CPU) or waiting (I/O).

    Updated without a lock: a lost update only nudges a heuristic.
    """

    def __init__(self) -> None:
        self.rows = 0
        self.wall = 0.0
        self.cpu = 0.0

    def waiting_mostly(self) -> bool:
        return self.rows == 0 or self.cpu < 0.5 * self.wall


async def _run_in_threads(
    pipeline: RowPipeline, feed: _Feed, pool: ThreadPoolExecutor,
    accept: Callable[[ExperimentRow], None], max_threads: int,
) -> None:
    """Everything is sync: pool threads run rows back to back, with no hop per row.

    Threads are added only while the running ones mostly wait (I/O-bound user code such
    as model calls): CPU-bound rows gain nothing from more threads under the GIL, and
    lose much to contention.
    """
    load = _Load()

    def loop() -> None:
        while (planned := feed.next()) is not None:
            wall, cpu = time.perf_counter(), time.thread_time()
            row = pipeline.run_sync(planned)
            load.wall += time.perf_counter() - wall
            load.cpu += time.thread_time() - cpu
            load.rows += 1
            accept(row)

    tasks = [asyncio.ensure_future(in_thread(pool, loop))]
    while len(tasks) < max_threads and not feed.exhausted:
        done, _ = await asyncio.wait(tasks, timeout=_RAMP_TICK_S, return_when=asyncio.FIRST_COMPLETED)
        if done:
            break
        if load.waiting_mostly():
            tasks.append(asyncio.ensure_future(in_thread(pool, loop)))
    await _gather_or_fail(tasks)


async def _gather_or_fail(tasks: Sequence[asyncio.Future[Any]]) -> None:
    """Like gather, but the first failure cancels the other workers."""
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            task.result()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _raise_first_error(row: ExperimentRow) -> None:
    where = f"example {row.example.id} (repetition {row.repetition})"
    if row.run.error is not None:
        raise RowFailedError(f"the target failed on {where}: {row.run.error}")
    for result in row.results:
        if result.error is not None:
            raise RowFailedError(f"evaluator {result.key!r} failed on {where}: {result.error}")


async def run_summaries(
    evaluators: Sequence[SummaryEvaluator], rows: Sequence[ExperimentRow]
) -> list[EvaluationResult]:
    if not evaluators:
        return []
    available = _summary_arguments(rows)
    results: list[EvaluationResult] = []
    for evaluator in evaluators:
        if evaluator.is_async:
            results.extend(await evaluator.call_async(available))
        else:
            results.extend(await asyncio.to_thread(evaluator.call_sync, available))
    return results


def _summary_arguments(rows: Sequence[ExperimentRow]) -> dict[str, Any]:
    per_row = [row_arguments(row.run, row.example) for row in rows]
    return {
        "runs": [row.run for row in rows],
        "examples": [row.example for row in rows],
        "inputs": [args["inputs"] for args in per_row],
        "outputs": [args["outputs"] for args in per_row],
        "reference_outputs": [args["reference_outputs"] for args in per_row],
        "evaluation_results": [row.results for row in rows],
    }


def merge_in_order(stored: list[ExperimentRow], new: list[ExperimentRow]) -> list[ExperimentRow]:
    rows = {(row.position, row.repetition): row for row in stored}
    rows.update({(row.position, row.repetition): row for row in new})
    return [rows[key] for key in sorted(rows)]
