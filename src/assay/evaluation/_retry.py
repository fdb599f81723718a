"""``resume=True, retry_errors=True``: run again what failed, keep what scored.

A resume always runs again the rows whose target failed (their rows are discarded
first). With ``retry_errors``, a stored row whose target ran but where an evaluator
errored (a judge's rate limit, an evaluator service's outage) has the evaluators that
errored run again on its stored run (the target is not called); their new results
replace the errored ones, and every result that scored stays as it was. Which evaluator
gave an errored result: the one named by its key, or declaring it; when none does, every
evaluator runs again on that row, and only the errored keys are replaced.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from assay.evaluation._binding import RowEvaluator
from assay.evaluation._rows import in_thread
from assay.evaluation._shard import Shard
from assay.schemas import EvaluationResult
from assay.store.base import Store
from assay.store.fence import Fence
from assay.store.records import ExperimentRecord, ExperimentRow

__all__ = ["Retried", "retry_evaluator_errors"]

_PAGE = 500  # rows read, re-scored and written (one transaction) at a time


@dataclass
class Retried:
    """What a retry did: target failures run again, evaluator errors run again, and how
    many of those errors now have a score."""

    targets: int = 0
    errors: int = 0
    fixed: int = 0

    def line(self) -> str:
        still = self.errors - self.fixed
        return (
            f"retried {self.targets} failed target(s) and {self.errors} evaluator error(s): "
            f"{self.fixed} now scored, {still} still errors"
        )


async def retry_evaluator_errors(
    store: Store,
    record: ExperimentRecord,
    evaluators: Sequence[RowEvaluator],
    shard: Shard,
    workers: int,
    fence: Fence,
) -> Retried:
    """Re-run the errored evaluators of the stored rows of ``shard``; see the module."""
    retried = Retried()
    after: tuple[int, int] | None = None
    limit = asyncio.Semaphore(max(1, workers))
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="assay-retry") as pool:
        while page := store.load_rows(record, after=after, limit=_PAGE):
            after = (page[-1].position, page[-1].repetition)
            reps = record.num_repetitions
            todo = [
                row
                for row in page
                if _errored(row) and (shard.count == 1 or shard.holds(row.position * reps + row.repetition))
            ]
            rescored = await asyncio.gather(*(_rescore(row, evaluators, pool, limit) for row in todo))
            replaced = [(row.run.id, new) for row, new in zip(todo, rescored) if new]
            if replaced:
                store.write_results(record.id, replaced, replace=True, fence=fence)
            for new in rescored:
                retried.errors += len(new)
                retried.fixed += sum(r.error is None for r in new)
    return retried


def _errored(row: ExperimentRow) -> set[str]:
    return {r.key for r in row.results if r.error is not None} if row.run.error is None else set()


async def _rescore(
    row: ExperimentRow,
    evaluators: Sequence[RowEvaluator],
    pool: ThreadPoolExecutor,
    limit: asyncio.Semaphore,
) -> list[EvaluationResult]:
    """The new results of ``row``'s errored keys (one per key that errored)."""
    keys = _errored(row)
    owners = [e for e in evaluators if keys & _keys_of(e)] or list(evaluators)
    results: list[EvaluationResult] = []
    async with limit:
        for evaluator in owners:
            if evaluator.is_async:
                results += await evaluator.call_async(row.run, row.example)
            else:
                results += await in_thread(pool, evaluator.call_sync, row.run, row.example)
    by_key = {r.key: r for r in results if r.key in keys}
    return list(by_key.values())


def _keys_of(evaluator: RowEvaluator) -> set[str]:
    declared = evaluator.expected.declared if evaluator.expected is not None else None
    return {evaluator.name, *(declared or ())}
