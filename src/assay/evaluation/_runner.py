"""The one async core: plan (example x repetition), skip what is stored, run the rest under
a concurrency limit, stream rows to one writer, then run the summary evaluators."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

from assay.evaluation._binding import SummaryEvaluator, row_arguments
from assay.evaluation._result import EvaluationResult
from assay.evaluation._rows import PlannedRow, RowPipeline, in_thread
from assay.evaluation._writer import RowWriter
from assay.store.base import Store
from assay.store.records import ExperimentRecord, ExperimentRow

# A chunk of sync rows goes to a thread in one hop; it grows only while rows are cheap,
# so slow rows (real model calls) still run one per thread and the tail stays short.
_CHUNK_BUDGET_S = 0.002
_MAX_CHUNK = 64


class RowFailedError(RuntimeError):
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
        if (str(example.id), repetition) not in done
    ]


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
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="assay-row") as pool:
        pending = iter(planned)
        try:
            await _gather_or_fail([_worker(pipeline, pending, pool, accept) for _ in range(workers)])
        finally:
            writer.close()
    return finished


async def _worker(
    pipeline: RowPipeline, pending: Iterator[PlannedRow], pool: ThreadPoolExecutor,
    accept: Callable[[ExperimentRow], None],
) -> None:
    if not pipeline.all_sync:
        for planned in pending:
            accept(await pipeline.run_async(planned, pool))
        return
    chunk_size = 1
    while chunk := list(itertools.islice(pending, chunk_size)):
        started = time.perf_counter()
        rows = await in_thread(pool, pipeline.run_chunk_sync, chunk)
        for row in rows:
            accept(row)
        per_row = (time.perf_counter() - started) / len(chunk)
        chunk_size = max(1, min(_MAX_CHUNK, int(_CHUNK_BUDGET_S / max(per_row, 1e-7))))


async def _gather_or_fail(coroutines: list[Any]) -> None:
    """Like gather, but the first failure cancels the other workers."""
    tasks = [asyncio.ensure_future(c) for c in coroutines]
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
