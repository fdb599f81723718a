"""The long-lived process on a Ray node that runs batches of rows.

One per Ray worker slot, kept for the executor's lifetime: its threads, its event loop,
and whatever the evaluators keep per process (the sandbox pool of the code evaluators,
model clients and their rate limits) stay warm from one batch, and one experiment, to
the next. Nothing here touches the experiment's store: rows go back to the driver.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from assay.evaluation.executor import PlannedRow, RowPipeline, in_thread
from assay.schemas import EvaluationResult, Run
from assay.store import Store, open_store
from assay.store.current import use_store

# Rows quicker than this are CPU work: under the GIL more threads only add contention.
_THREADS_HELP_S = 0.001
_KEPT_PIPELINES = 4


@dataclass(frozen=True)
class BatchResult:
    """A batch's rows in the order sent, as (run, results), how long they took, and the
    process that ran them."""

    rows: list[tuple[Run, list[EvaluationResult]]]
    seconds: float
    pid: int


class RowWorker:
    """Runs batches with up to ``threads`` rows at once. Ray's actor: its methods are all
    synchronous (an ``async def`` would make Ray run it as an asyncio actor), the async
    work is in :class:`_Rows`, on the worker's own loop."""

    def __init__(self, threads: int) -> None:
        self._rows = _Rows(max(1, threads))
        self._pipelines: OrderedDict[str, RowPipeline] = OrderedDict()

    def run_batch(self, key: str, shipped: Sequence[Any], rows: list[PlannedRow]) -> BatchResult:
        """``shipped`` wraps the pipeline's object reference in a list so that Ray passes
        the reference, not the pipeline: it is fetched once per worker and experiment."""
        pipeline = self._pipeline(key, shipped)
        started = time.perf_counter()
        done = self._rows.run(pipeline, rows)
        return BatchResult(done, time.perf_counter() - started, os.getpid())

    def _pipeline(self, key: str, shipped: Sequence[Any]) -> RowPipeline:
        pipeline = self._pipelines.get(key)
        if pipeline is None:
            import ray

            pipeline = ray.get(shipped[0])
            self._pipelines[key] = pipeline
            while len(self._pipelines) > _KEPT_PIPELINES:
                self._pipelines.popitem(last=False)
        return pipeline


class _Rows:
    """The worker's threads and event loop (alive as long as the worker, so async clients
    stay bound to one loop), and the store judges and embeddings cache in: one of the
    worker's own, in memory, so that workers never write to the experiment's database."""

    def __init__(self, threads: int) -> None:
        self._threads = threads
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="assay-ray-row")
        self._loop = asyncio.new_event_loop()
        threading.Thread(target=self._loop.run_forever, name="assay-ray-loop", daemon=True).start()
        self._cache: Store = open_store("sqlite://")
        self._row_seconds = 1.0

    def run(self, pipeline: RowPipeline, rows: list[PlannedRow]) -> list[tuple[Run, list[EvaluationResult]]]:
        started = time.perf_counter()
        done = asyncio.run_coroutine_threadsafe(self._run(pipeline, rows), self._loop).result()
        self._row_seconds = (time.perf_counter() - started) / max(len(rows), 1)
        return done

    async def _run(
        self, pipeline: RowPipeline, rows: list[PlannedRow]
    ) -> list[tuple[Run, list[EvaluationResult]]]:
        with use_store(self._cache):
            if pipeline.all_sync:
                finished = await self._run_in_threads(pipeline, rows)
            else:
                finished = await self._run_on_loop(pipeline, rows)
        return [(row.run, row.results) for row in finished]

    async def _run_in_threads(self, pipeline: RowPipeline, rows: list[PlannedRow]) -> list[Any]:
        threads = 1 if self._row_seconds < _THREADS_HELP_S else min(self._threads, len(rows))
        finished: list[Any] = [None] * len(rows)
        feed: Iterator[int] = iter(range(len(rows)))
        lock = threading.Lock()

        def loop() -> None:
            while True:
                with lock:
                    index = next(feed, None)
                if index is None:
                    return
                finished[index] = pipeline.run_sync(rows[index])

        await asyncio.gather(*(in_thread(self._pool, loop) for _ in range(threads)))
        return finished

    async def _run_on_loop(self, pipeline: RowPipeline, rows: list[PlannedRow]) -> list[Any]:
        limit = asyncio.Semaphore(self._threads)

        async def one(planned: PlannedRow) -> Any:
            async with limit:
                return await pipeline.run_async(planned, self._pool)

        return list(await asyncio.gather(*(one(planned) for planned in rows)))
