"""``evaluate`` and ``aevaluate``: the public entry points. One async core; the sync API
runs it on an event loop (in a helper thread when the caller already has a loop running)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

from assay._aio import run_coroutine
from assay.evaluation._binding import bind_row_evaluator, bind_summary_evaluator
from assay.evaluation._data import ResolvedData, resolve_data
from assay.evaluation._experiment import ExperimentPlan, experiment_name, open_experiment
from assay.evaluation._paged import stored_rows, summary_arguments
from assay.evaluation._results import ExperimentResults
from assay.evaluation._rows import RowPipeline
from assay.evaluation._runner import RowFeed, RunSettings, done_keys, run_rows, run_summaries
from assay.evaluation._tally import Tally, tally_of_stored
from assay.evaluation._target import Target as TargetRunner
from assay.evaluation.types import DataSource, EvaluatorLike, SummaryEvaluatorLike, Target
from assay.store import Store, open_store
from assay.store.current import use_store

if TYPE_CHECKING:
    from assay.client import Client

DEFAULT_MAX_CONCURRENCY = 16


async def aevaluate(
    target: Target,
    data: DataSource | None = None,
    evaluators: Sequence[EvaluatorLike] | None = None,
    summary_evaluators: Sequence[SummaryEvaluatorLike] | None = None,
    experiment_prefix: str | None = None,
    experiment: str | None = None,
    description: str | None = None,
    metadata: dict[str, Any] | None = None,
    max_concurrency: int | None = DEFAULT_MAX_CONCURRENCY,
    num_repetitions: int = 1,
    error_handling: Literal["log", "ignore", "raise"] = "log",
    resume: bool = False,
    client: Client | None = None,
    *,
    progress: bool | None = None,
) -> ExperimentResults:
    """Run ``target`` over ``data``, score every row, store everything, return the results.

    ``max_concurrency`` bounds rows in flight (default 16; ``None`` or 0 means 1 per CPU x 4).
    ``progress`` shows a progress bar and the final report (default: when stdout is a TTY).
    """
    from assay.report import Progress, print_report

    _check_arguments(num_repetitions, error_handling, resume, experiment)
    concurrency = _concurrency(max_concurrency)
    name = experiment_name(experiment, experiment_prefix)
    store = client.store if client is not None else open_store()
    row_evaluators = [bind_row_evaluator(e) for e in _as_list(evaluators, "evaluators")]
    summaries = [bind_summary_evaluator(e) for e in _as_list(summary_evaluators, "summary_evaluators")]
    runner = TargetRunner(target)
    runner.check_signature()
    with _fewer_collections():
        resolved = _resolve(data, experiment if resume else None, store)
    plan = ExperimentPlan(
        target=runner.name, evaluators=tuple(e.name for e in row_evaluators),
        summary_evaluators=tuple(s.name for s in summaries), num_repetitions=num_repetitions,
    )
    record = open_experiment(
        store, name, resolved, plan,
        resume=resume, description=description, metadata=metadata,
    )
    if resume:  # rows whose target failed (a rate limit, an outage) are run again
        store.discard_failed_runs(record.id)
    with _fewer_collections():
        tally = tally_of_stored(store.iter_scores(record.id)) if resume else Tally()
        done = done_keys(store.stored_keys(record.id), num_repetitions) if resume else set()
    total = resolved.count * num_repetitions
    feed = RowFeed(resolved.examples(store), num_repetitions, done, total)
    bar = Progress(total=total, done=len(done), enabled=progress)
    settings = RunSettings(concurrency, error_handling == "raise", bar.advance)
    status = "failed"
    try:
        with use_store(store), bar, _fewer_collections():
            pipeline = RowPipeline(runner, row_evaluators)
            stats = await run_rows(pipeline, feed, store, record, settings, tally)
            if summaries:
                available = summary_arguments(store, record, stats.rows)
                summary = await run_summaries(summaries, available)
            else:
                summary = []
        store.replace_summary_results(record.id, summary)
        status = "completed"
    finally:
        store.finish_experiment(record.id, status)
    final = store.get_experiment(id=record.id) or record
    rows = stored_rows(store, final, stats.rows)
    results = ExperimentResults(final, rows, summary, store.url, stats=stats, store=store)
    if bar.enabled:
        print_report(results)
    return results


def evaluate(
    target: Target,
    data: DataSource | None = None,
    evaluators: Sequence[EvaluatorLike] | None = None,
    summary_evaluators: Sequence[SummaryEvaluatorLike] | None = None,
    experiment_prefix: str | None = None,
    experiment: str | None = None,
    description: str | None = None,
    metadata: dict[str, Any] | None = None,
    max_concurrency: int | None = DEFAULT_MAX_CONCURRENCY,
    num_repetitions: int = 1,
    error_handling: Literal["log", "ignore", "raise"] = "log",
    resume: bool = False,
    client: Client | None = None,
    *,
    progress: bool | None = None,
) -> ExperimentResults:
    """The synchronous face of :func:`aevaluate`; same parameters, same results."""
    coroutine = aevaluate(
        target, data, evaluators, summary_evaluators, experiment_prefix, experiment,
        description, metadata, max_concurrency, num_repetitions, error_handling, resume,
        client, progress=progress,
    )
    results: ExperimentResults = run_coroutine(coroutine)
    return results


class _FewerCollections:
    """An experiment allocates many small long-lived records (runs, results), which makes
    CPython's young-generation collector run constantly for nothing; raise its threshold
    while any experiment runs (a quarter of the wall time on a 10,000-row run), and restore
    the caller's setting when the last one ends (experiments may overlap)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._saved = gc.get_threshold()

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._saved = gc.get_threshold()
                gc.set_threshold(max(self._saved[0], 50_000), *self._saved[1:])
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    gc.set_threshold(*self._saved)


_fewer_collections = _FewerCollections()


def _as_list(evaluators: Sequence[Any] | None, parameter: str) -> list[Any]:
    if evaluators is None:
        return []
    if callable(evaluators) or isinstance(evaluators, (str, bytes)) or not hasattr(evaluators, "__iter__"):
        raise TypeError(f"{parameter}= takes a list, e.g. {parameter}=[my_evaluator]; got {evaluators!r}")
    return list(evaluators)


def _check_arguments(
    num_repetitions: int, error_handling: str, resume: bool, experiment: str | None
) -> None:
    if experiment is not None and not experiment.strip():
        raise ValueError("experiment= must be a non-empty name (or None to generate one)")
    if not isinstance(num_repetitions, int) or num_repetitions < 1:
        raise ValueError(f"num_repetitions must be a positive integer, got {num_repetitions!r}")
    if error_handling not in ("log", "ignore", "raise"):
        raise ValueError(
            f"error_handling must be 'log' (or LangSmith's 'ignore', the same here) or 'raise', "
            f"got {error_handling!r}"
        )
    if resume and not experiment:
        raise ValueError("resume=True needs experiment='<name>' naming the experiment to resume")


def _resolve(data: Any, resume_name: str | None, store: Store) -> ResolvedData:
    if data is None and resume_name:
        stored = store.get_experiment(name=resume_name)
        if stored is not None and stored.dataset_id is not None:
            dataset = store.get_dataset(id=stored.dataset_id)
            if dataset is not None:
                version = stored.dataset_version
                count = store.count_examples(dataset.id, version=version)
                return ResolvedData(dataset, version or 0, count)
    if data is None:
        raise ValueError("data= is required: a dataset name or id, a Dataset, a file path, or a list")
    return resolve_data(data, store)


def _concurrency(max_concurrency: int | None) -> int:
    if not max_concurrency:
        import os

        return 4 * (os.cpu_count() or 1)
    if max_concurrency < 0:
        raise ValueError(f"max_concurrency must be positive, got {max_concurrency}")
    return max_concurrency
