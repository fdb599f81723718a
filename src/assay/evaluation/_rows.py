"""Running one row (target, then row evaluators), sync in a worker thread or async on the loop."""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Executor
from typing import Any, NamedTuple, TypeVar

from assay.evaluation._binding import RowEvaluator
from assay.evaluation._target import Target
from assay.schemas import EvaluationResult, Example, Run
from assay.store.records import ExperimentRow

T = TypeVar("T")


class PlannedRow(NamedTuple):  # a tuple: made per row, cheaper than a frozen dataclass
    position: int
    example: Example
    repetition: int


async def in_thread(pool: Executor, fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn`` in ``pool`` with this context's contextvars (current store, current run)."""
    context = contextvars.copy_context()
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(pool, functools.partial(context.run, fn, *args))


class RowPipeline:
    def __init__(self, target: Target, evaluators: Sequence[RowEvaluator]) -> None:
        self.target = target
        self.evaluators = list(evaluators)
        self._sync_evaluators = [e for e in self.evaluators if not e.is_async]
        self._async_evaluators = [e for e in self.evaluators if e.is_async]
        self.all_sync = not target.is_async and not self._async_evaluators

    def run_sync(self, planned: PlannedRow) -> ExperimentRow:
        position, example, repetition = planned
        run = self.target.run_sync(example, repetition)
        results: list[EvaluationResult] = []
        for evaluator in self._sync_evaluators:  # each evaluator's results in turn, as _evaluate_sync
            results += evaluator.call_sync(run, example)
        return ExperimentRow(run, example, repetition, position, results)

    async def run_async(self, planned: PlannedRow, pool: Executor) -> ExperimentRow:
        example = planned.example
        if self.target.is_async:
            run = await self.target.run_async(example, planned.repetition)
        else:
            run = await in_thread(pool, self.target.run_sync, example, planned.repetition)
        jobs: list[Awaitable[Any]] = [e.call_async(run, example) for e in self._async_evaluators]
        if self._sync_evaluators:
            jobs.append(in_thread(pool, self._evaluate_sync_each, run, example))
        parts = await asyncio.gather(*jobs)
        by_evaluator = dict(zip(map(id, self._async_evaluators), parts))
        if self._sync_evaluators:
            by_evaluator.update(zip(map(id, self._sync_evaluators), parts[-1]))
        results = [r for evaluator in self.evaluators for r in by_evaluator[id(evaluator)]]
        return self._row(planned, run, results)

    def _evaluate_sync(self, run: Run, example: Example) -> list[EvaluationResult]:
        return [r for part in self._evaluate_sync_each(run, example) for r in part]

    def _evaluate_sync_each(self, run: Run, example: Example) -> list[list[EvaluationResult]]:
        return [evaluator.call_sync(run, example) for evaluator in self._sync_evaluators]

    def _row(self, planned: PlannedRow, run: Run, results: list[EvaluationResult]) -> ExperimentRow:
        return ExperimentRow(
            run=run,
            example=planned.example,
            repetition=planned.repetition,
            position=planned.position,
            results=results,
        )
