"""``evaluate_comparative``: judge stored experiments on the same dataset against each other.

Per example (and repetition) present in every experiment, each ``ComparisonEvaluator``
judges every pair of experiments; a plain function ``(runs, example)`` sees all of them at
once (LangSmith's form) and returns ``{"scores": {run_id: score}}``. Outcomes are stored
with ``store.add_comparisons`` under one comparison name.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import itertools
import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from assay._traceback import describe
from assay.comparison.comparability import check_comparable, experiment_record
from assay.evaluation._pairwise_bias import PairwiseBias, pairwise_bias
from assay.llm.usage import UsageMeter
from assay.schemas import Example, Run
from assay.store.base import Store
from assay.store.current import use_store
from assay.store.records import ComparisonRecord, ExperimentRecord, ExperimentRow

__all__ = [
    "ComparativeEvaluator",
    "ComparativeResults",
    "ExperimentRef",
    "PairwiseEvaluator",
    "aevaluate_comparative",
    "evaluate_comparative",
]


@runtime_checkable
class PairwiseEvaluator(Protocol):
    """What the runner needs of a pairwise judge (``assay.evaluators.judge.pairwise.ComparisonEvaluator``).

    ``compare_runs`` returns an outcome with ``scores`` (two floats), ``preferred``
    (``"first"``, ``"second"`` or ``"tie"``), ``swapped``, ``reasoning`` and ``metadata``.
    """

    name: str

    @property
    def model_name(self) -> str: ...

    async def compare_runs(self, runs: tuple[Run, Run], example: Example, meter: UsageMeter) -> Any: ...


ExperimentRef = str | uuid.UUID | ExperimentRecord | Any  # name, id, record or results
ComparativeEvaluator = PairwiseEvaluator | Callable[..., Any]
_FUNCTION_PARAMETERS = ("runs", "example", "inputs", "outputs", "reference_outputs")


@dataclass
class ComparativeResults:
    """What ``evaluate_comparative`` stored, with per-experiment win rates per key."""

    name: str
    experiments: list[ExperimentRecord]
    records: list[ComparisonRecord]

    def win_rates(self, key: str | None = None) -> dict[str, float]:
        """Mean score per experiment name (a win 1, a tie 0.5), errors left out."""
        totals: dict[str, list[float]] = {}
        names = {str(e.id): e.name for e in self.experiments}
        for record in self.records:
            if record.error is not None or (key is not None and record.key != key):
                continue
            for experiment_id, score in record.scores.items():
                totals.setdefault(names[experiment_id], []).append(score)
        return {name: sum(scores) / len(scores) for name, scores in totals.items()}

    def bias(self, key: str | None = None) -> PairwiseBias:
        """Position consistency, first-shown rate, tie rate and verbosity correlation of the
        pairwise verdicts (of ``key``, default every pairwise judge's)."""
        return pairwise_bias(r for r in self.records if key is None or r.key == key)

    @property
    def errors(self) -> list[ComparisonRecord]:
        return [record for record in self.records if record.error is not None]


@dataclass(frozen=True)
class _Job:
    evaluator: ComparativeEvaluator
    experiments: tuple[ExperimentRecord, ...]
    rows: tuple[ExperimentRow, ...]
    randomize_order: bool = False  # a function evaluator sees the runs in a random order


def evaluate_comparative(
    experiments: Sequence[ExperimentRef],
    evaluators: Sequence[ComparativeEvaluator],
    client: Any = None,
    *,
    name: str | None = None,
    max_concurrency: int = 16,
    randomize_order: bool = False,
) -> ComparativeResults:
    """Judge two or more stored experiments on one dataset against each other; see module doc.
    ``randomize_order`` shows a function evaluator each example's runs in a random order
    (against position bias; the pairwise judges swap the order themselves)."""
    from assay._aio import run_coroutine

    results: ComparativeResults = run_coroutine(
        aevaluate_comparative(
            experiments,
            evaluators,
            client,
            name=name,
            max_concurrency=max_concurrency,
            randomize_order=randomize_order,
        )
    )
    return results


async def aevaluate_comparative(
    experiments: Sequence[ExperimentRef],
    evaluators: Sequence[ComparativeEvaluator],
    client: Any = None,
    *,
    name: str | None = None,
    max_concurrency: int = 16,
    randomize_order: bool = False,
) -> ComparativeResults:
    store = _store_of(client)
    records = [experiment_record(store, ref) for ref in experiments]
    _check(records, evaluators, max_concurrency)
    name = name or "-vs-".join(r.name for r in records) + f"-{uuid.uuid4().hex[:8]}"
    jobs = [
        dataclasses.replace(job, randomize_order=randomize_order) for job in _jobs(store, records, evaluators)
    ]
    limit = asyncio.Semaphore(max_concurrency)

    async def run(job: _Job) -> list[ComparisonRecord]:
        async with limit:
            return await _judge(job, name)

    with use_store(store):  # judge calls are cached in this store
        outcomes = await asyncio.gather(*(run(job) for job in jobs))
    stored = [record for outcome in outcomes for record in outcome]
    store.add_comparisons(stored)
    return ComparativeResults(name=name, experiments=records, records=stored)


def _store_of(client: Any) -> Store:
    if client is None:
        from assay.store.current import current_store

        return current_store()
    if isinstance(client, Store):
        return client
    store = getattr(client, "store", None)
    if not isinstance(store, Store):
        raise TypeError(f"client must be an assay.Client or a Store, got {type(client).__name__}")
    return store


def _check(records: list[ExperimentRecord], evaluators: Sequence[Any], max_concurrency: int) -> None:
    check_comparable(records, what="evaluate_comparative")
    if not evaluators:
        raise ValueError("evaluate_comparative needs at least one evaluator")
    for evaluator in evaluators:
        if not isinstance(evaluator, PairwiseEvaluator) and not callable(evaluator):
            raise TypeError(
                f"a comparative evaluator must be a ComparisonEvaluator or a function, got {evaluator!r}"
            )
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")


def _jobs(
    store: Store, records: list[ExperimentRecord], evaluators: Sequence[ComparativeEvaluator]
) -> list[_Job]:
    by_key = [{row.key: row for row in store.load_rows(record)} for record in records]
    shared = [key for key in by_key[0] if all(key in rows for rows in by_key[1:])]
    jobs = []
    for key, evaluator in itertools.product(shared, evaluators):
        if isinstance(evaluator, PairwiseEvaluator):
            for i, j in itertools.combinations(range(len(records)), 2):
                jobs.append(_Job(evaluator, (records[i], records[j]), (by_key[i][key], by_key[j][key])))
        else:
            jobs.append(_Job(evaluator, tuple(records), tuple(rows[key] for rows in by_key)))
    return jobs


async def _judge(job: _Job, name: str) -> list[ComparisonRecord]:
    example = job.rows[0].example
    base = ComparisonRecord(
        name=name,
        experiment_ids=[e.id for e in job.experiments],
        example_id=example.id,
        key=_key(job.evaluator),
        scores={},
        metadata={
            "repetition": job.rows[0].repetition,
            "run_ids": [str(r.run.id) for r in job.rows],
            "experiments": {str(e.id): e.name for e in job.experiments},
        },
    )
    try:
        if isinstance(job.evaluator, PairwiseEvaluator):
            return [await _judge_pair(job.evaluator, job, example, base)]
        return [await _call_function(job.evaluator, job, example, base)]
    except Exception as exc:  # failures are data
        base.error = describe(exc)
        return [base]


async def _judge_pair(
    evaluator: PairwiseEvaluator, job: _Job, example: Example, record: ComparisonRecord
) -> ComparisonRecord:
    meter = UsageMeter()
    first, second = job.experiments
    try:
        outcome = await evaluator.compare_runs((job.rows[0].run, job.rows[1].run), example, meter)
    finally:
        record.metadata["usage"] = meter.total.as_metadata()
    shown = (second, first) if outcome.swapped else (first, second)
    record.scores = {str(first.id): outcome.scores[0], str(second.id): outcome.scores[1]}
    record.comment = outcome.reasoning
    record.metadata.update(
        {
            "presented_order": [str(e.id) for e in shown],
            "swapped": outcome.swapped,
            "preferred": str({"first": first.id, "second": second.id}.get(outcome.preferred, "tie")),
            "verdict": outcome.preferred,  # "first" | "second" | "tie", first = experiment_ids[0]
            "model": evaluator.model_name,
            **outcome.metadata,
        }
    )
    return record


async def _call_function(
    function: Callable[..., Any], job: _Job, example: Example, record: ComparisonRecord
) -> ComparisonRecord:
    order = list(range(len(job.rows)))
    if job.randomize_order:
        random.shuffle(order)
        record.metadata["presented_order"] = [str(job.experiments[i].id) for i in order]
    runs = [job.rows[i].run for i in order]
    experiments = tuple(job.experiments[i] for i in order)
    available = {
        "runs": runs,
        "example": example,
        "inputs": example.inputs,
        "outputs": [run.outputs or {} for run in runs],
        "reference_outputs": example.outputs or {},
    }
    params = inspect.signature(function).parameters
    unknown = [p for p in params if p not in _FUNCTION_PARAMETERS]
    if unknown:
        raise TypeError(
            f"comparative evaluator {_key(function)!r} has unknown parameters "
            f"{unknown}; accepted: {list(_FUNCTION_PARAMETERS)}"
        )
    returned = function(**{p: available[p] for p in params})
    if inspect.isawaitable(returned):
        returned = await returned
    if not isinstance(returned, dict) or not isinstance(returned.get("scores"), dict):
        raise TypeError(
            f"comparative evaluator {_key(function)!r} must return {{'scores': {{run_id: score}}, ...}}"
        )
    record.key = str(returned.get("key") or record.key)
    record.scores = _scores_by_experiment(returned["scores"], runs, experiments)
    record.comment = returned.get("comment")
    return record


def _scores_by_experiment(
    scores: dict[Any, Any], runs: list[Run], experiments: tuple[ExperimentRecord, ...]
) -> dict[str, float]:
    index = {str(run.id): str(e.id) for run, e in zip(runs, experiments)}
    index.update({str(position): str(e.id) for position, e in enumerate(experiments)})
    mapped = {}
    for who, score in scores.items():
        experiment_id = index.get(str(who))
        if experiment_id is None:
            raise KeyError(f"score for {who!r}, which is neither a run id nor a position")
        mapped[experiment_id] = float(score)
    return mapped


def _key(evaluator: Any) -> str:
    if isinstance(evaluator, PairwiseEvaluator):
        return evaluator.name
    return str(getattr(evaluator, "__name__", None) or type(evaluator).__name__)
