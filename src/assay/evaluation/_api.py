"""``evaluate`` and ``aevaluate``: the public entry points, in LangSmith's parameter order.

One async core; the sync API runs it on an event loop (in a helper thread when the caller
already has a loop running, or in the background with ``blocking=False``). What ``target``
is decides what happens (``_dispatch``): a callable is run over the data; a tuple of
experiments is compared; a stored experiment's name is re-scored.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import functools
import gc
import os
import sys
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, overload

from assay._aio import run_coroutine
from assay.errors import LeaseFencedError, StorageFault
from assay.evaluation._arguments import known_keywords
from assay.evaluation._binding import (
    SummaryEvaluator,
    bind_row_evaluator,
    bind_summary_evaluator,
)
from assay.evaluation._data import ResolvedData, resolve_data
from assay.evaluation._experiment import ExperimentPlan, experiment_name, open_experiment
from assay.evaluation._feed import RowFeed, done_keys
from assay.evaluation._interrupt import (
    ExperimentInterrupted,
    interrupted_error,
    is_interrupt,
    raise_interrupted,
)
from assay.evaluation._kept import KeptRows, wanted_fields
from assay.evaluation._lease import ShardLease
from assay.evaluation._paged import stored_rows, summary_arguments
from assay.evaluation._results import AsyncExperimentResults, ExperimentResults
from assay.evaluation._rows import RowPipeline
from assay.evaluation._runner import RunSettings, run_rows, run_summaries
from assay.evaluation._shard import Shard, shard_argument
from assay.evaluation._sharded import end_shard, fenced, release_quietly, shard_line, shard_rows_stored
from assay.evaluation._stream import Outcome, RowStream
from assay.evaluation._tally import Tally, tally_of_stored
from assay.evaluation._target import Target as TargetRunner
from assay.evaluation.types import DataSource, EvaluatorLike, HasStore, SummaryEvaluatorLike, Target
from assay.schemas import EvaluationResult, TracerSession
from assay.store import Store, open_store
from assay.store.current import use_store
from assay.store.records import ExperimentRecord, ExperimentRow

if TYPE_CHECKING:
    from assay.evaluation._pairwise_run import ComparativeResults
    from assay.evaluation.executor import Executor

DEFAULT_MAX_CONCURRENCY = 16
ErrorHandling = Literal["log", "ignore", "raise"]


@dataclass
class _Options:
    """Everything ``evaluate`` was given, once its positional/keyword forms are merged."""

    data: Any
    evaluators: Sequence[Any] | None
    summary_evaluators: Sequence[Any] | None
    metadata: dict[str, Any] | None
    experiment_prefix: str | None
    description: str | None
    max_concurrency: int | None
    num_repetitions: int
    client: HasStore | None
    blocking: bool
    experiment: Any
    upload_results: bool
    error_handling: ErrorHandling
    resume: bool
    progress: bool | None
    shard: Any = None
    wait_for_lease: bool = False
    executor: Any = None
    retry_errors: bool = False
    max_cost: float | None = None
    upload_given: bool = False  # upload_results= (or upload_runs=) was passed
    randomize_order: bool = False


def _options(given: dict[str, Any]) -> _Options:
    """The options of ``evaluate``/``aevaluate`` from their parameters (one place for both)."""
    names = {f.name for f in dataclasses.fields(_Options)} - {"upload_results", "upload_given"}
    upload = _upload(given["upload_results"], given["upload_runs"])
    upload_given = given["upload_results"] is not None or given["upload_runs"] is not None
    return _Options(**{name: given[name] for name in names}, upload_results=upload, upload_given=upload_given)


@dataclass
class _Prepared:
    """An experiment ready to run: checked, bound, its data resolved, its record open."""

    store: Store
    cache_store: Store
    record: ExperimentRecord
    pipeline: RowPipeline
    summaries: list[SummaryEvaluator]
    feed: RowFeed
    tally: Tally  # of the rows already stored (a resume), to which new rows are added
    concurrency: int
    options: _Options
    lease: ShardLease
    executor: Executor | None = None  # None: this process's threads and event loop
    rerun_targets: int = 0  # stored rows whose target failed, discarded to run again
    created: bool = False  # this call created the experiment: nothing of it was stored before


@overload
async def aevaluate(
    target: tuple[Any, ...],
    /,
    data: DataSource | None = None,
    evaluators: Sequence[EvaluatorLike] | None = None,
    summary_evaluators: Sequence[SummaryEvaluatorLike] | None = None,
    metadata: dict[str, Any] | None = None,
    experiment_prefix: str | None = None,
    description: str | None = None,
    max_concurrency: int | None = DEFAULT_MAX_CONCURRENCY,
    num_repetitions: int = 1,
    client: HasStore | None = None,
    blocking: bool = True,
    experiment: Any = None,
    upload_results: bool | None = None,
    *,
    error_handling: ErrorHandling = "log",
    resume: bool = False,
    progress: bool | None = None,
    upload_runs: bool | None = None,
    disable_evaluator_tracing: bool = False,
    shard: tuple[int, int] | None = None,
    wait_for_lease: bool = False,
    executor: Any = None,
    retry_errors: bool = False,
    max_cost: float | None = None,
    randomize_order: bool = False,
) -> ComparativeResults: ...
@overload
async def aevaluate(
    target: Target | str | uuid.UUID | TracerSession | ExperimentResults,
    /,
    data: DataSource | None = None,
    evaluators: Sequence[EvaluatorLike] | None = None,
    summary_evaluators: Sequence[SummaryEvaluatorLike] | None = None,
    metadata: dict[str, Any] | None = None,
    experiment_prefix: str | None = None,
    description: str | None = None,
    max_concurrency: int | None = DEFAULT_MAX_CONCURRENCY,
    num_repetitions: int = 1,
    client: HasStore | None = None,
    blocking: bool = True,
    experiment: Any = None,
    upload_results: bool | None = None,
    *,
    error_handling: ErrorHandling = "log",
    resume: bool = False,
    progress: bool | None = None,
    upload_runs: bool | None = None,
    disable_evaluator_tracing: bool = False,
    shard: tuple[int, int] | None = None,
    wait_for_lease: bool = False,
    executor: Any = None,
    retry_errors: bool = False,
    max_cost: float | None = None,
    randomize_order: bool = False,
) -> AsyncExperimentResults: ...


@known_keywords
async def aevaluate(
    target: Target | tuple[Any, ...] | str | uuid.UUID | TracerSession | ExperimentResults,
    /,
    data: DataSource | None = None,
    evaluators: Sequence[EvaluatorLike] | None = None,
    summary_evaluators: Sequence[SummaryEvaluatorLike] | None = None,
    metadata: dict[str, Any] | None = None,
    experiment_prefix: str | None = None,
    description: str | None = None,
    max_concurrency: int | None = DEFAULT_MAX_CONCURRENCY,
    num_repetitions: int = 1,
    client: HasStore | None = None,
    blocking: bool = True,
    experiment: Any = None,
    upload_results: bool | None = None,
    *,
    error_handling: ErrorHandling = "log",
    resume: bool = False,
    progress: bool | None = None,
    upload_runs: bool | None = None,
    disable_evaluator_tracing: bool = False,
    shard: tuple[int, int] | None = None,
    wait_for_lease: bool = False,
    executor: Any = None,
    retry_errors: bool = False,
    max_cost: float | None = None,
    randomize_order: bool = False,
) -> Any:
    """Run ``target`` over ``data``, score every row, store everything, return the results.

    ``max_concurrency`` bounds rows in flight (default 16; ``None`` or 0 means 1 per CPU x 4).
    ``blocking=False`` returns at once; ``async for row in results`` yields rows as they
    finish and ``await results.wait()`` waits for the end. ``upload_results=False`` keeps
    the experiment in memory only. ``progress`` shows a progress bar and the final report
    (default: when stdout is a TTY). A tuple of experiments as ``target`` compares them.
    ``shard=(i, n)`` runs shard ``i`` (from 0) of ``n`` into the experiment named by
    ``experiment=``, which the first shard creates and the others join; it completes when
    every shard has. ``wait_for_lease=True`` waits while another process runs the same
    shard (or, without ``shard``, the same experiment) instead of refusing.
    ``executor`` says where rows run: ``RayExecutor(address=...)`` on a Ray cluster, else
    here (``ASSAY_EXECUTOR=ray`` chooses Ray too); this process stores every row.
    ``resume=True`` runs again the stored rows whose target failed; with
    ``retry_errors=True`` also the evaluators whose results errored (on the stored runs,
    the target not called), keeping every result that scored.
    ``disable_evaluator_tracing`` is LangSmith's and changes nothing here: evaluators are
    never traced (only the target's runs are stored).
    ``max_cost`` (US dollars) caps this run's judge calls: once spent, the remaining rows
    are stored as failed runs saying so, and ``resume=True`` with a new ``max_cost`` runs
    them (see ``assay._budget``; judge models need a price).
    """
    options = _options(locals())  # first: locals() is exactly the parameters here
    special = _dispatch(target, options)
    if special is not None:
        return await special
    prepared = _prepare(target, options)
    stream = RowStream()
    results = AsyncExperimentResults(
        prepared.record, [], [], prepared.store.url, store=prepared.store, stream=stream
    )
    if blocking:
        await _execute(prepared, stream)
        await results.wait()
    else:
        results.task = asyncio.ensure_future(_execute(prepared, stream))  # kept: a task needs a reference
    return results


@overload
def evaluate(
    target: tuple[Any, ...],
    /,
    data: DataSource | None = None,
    evaluators: Sequence[EvaluatorLike] | None = None,
    summary_evaluators: Sequence[SummaryEvaluatorLike] | None = None,
    metadata: dict[str, Any] | None = None,
    experiment_prefix: str | None = None,
    description: str | None = None,
    max_concurrency: int | None = DEFAULT_MAX_CONCURRENCY,
    num_repetitions: int = 1,
    client: HasStore | None = None,
    blocking: bool = True,
    experiment: Any = None,
    upload_results: bool | None = None,
    *,
    error_handling: ErrorHandling = "log",
    resume: bool = False,
    progress: bool | None = None,
    upload_runs: bool | None = None,
    disable_evaluator_tracing: bool = False,
    shard: tuple[int, int] | None = None,
    wait_for_lease: bool = False,
    executor: Any = None,
    retry_errors: bool = False,
    max_cost: float | None = None,
    randomize_order: bool = False,
) -> ComparativeResults: ...
@overload
def evaluate(
    target: Target | str | uuid.UUID | TracerSession | ExperimentResults,
    /,
    data: DataSource | None = None,
    evaluators: Sequence[EvaluatorLike] | None = None,
    summary_evaluators: Sequence[SummaryEvaluatorLike] | None = None,
    metadata: dict[str, Any] | None = None,
    experiment_prefix: str | None = None,
    description: str | None = None,
    max_concurrency: int | None = DEFAULT_MAX_CONCURRENCY,
    num_repetitions: int = 1,
    client: HasStore | None = None,
    blocking: bool = True,
    experiment: Any = None,
    upload_results: bool | None = None,
    *,
    error_handling: ErrorHandling = "log",
    resume: bool = False,
    progress: bool | None = None,
    upload_runs: bool | None = None,
    disable_evaluator_tracing: bool = False,
    shard: tuple[int, int] | None = None,
    wait_for_lease: bool = False,
    executor: Any = None,
    retry_errors: bool = False,
    max_cost: float | None = None,
    randomize_order: bool = False,
) -> ExperimentResults: ...


@known_keywords
def evaluate(
    target: Target | tuple[Any, ...] | str | uuid.UUID | TracerSession | ExperimentResults,
    /,
    data: DataSource | None = None,
    evaluators: Sequence[EvaluatorLike] | None = None,
    summary_evaluators: Sequence[SummaryEvaluatorLike] | None = None,
    metadata: dict[str, Any] | None = None,
    experiment_prefix: str | None = None,
    description: str | None = None,
    max_concurrency: int | None = DEFAULT_MAX_CONCURRENCY,
    num_repetitions: int = 1,
    client: HasStore | None = None,
    blocking: bool = True,
    experiment: Any = None,
    upload_results: bool | None = None,
    *,
    error_handling: ErrorHandling = "log",
    resume: bool = False,
    progress: bool | None = None,
    upload_runs: bool | None = None,
    disable_evaluator_tracing: bool = False,
    shard: tuple[int, int] | None = None,
    wait_for_lease: bool = False,
    executor: Any = None,
    retry_errors: bool = False,
    max_cost: float | None = None,
    randomize_order: bool = False,
) -> Any:
    """The synchronous face of :func:`aevaluate`; same parameters, same results.

    ``blocking=False`` runs the experiment in a background thread: iterating the results
    yields rows as they finish; ``results.wait()`` blocks until the end.
    """
    options = _options(locals())  # first: locals() is exactly the parameters here
    special = _dispatch(target, options)
    if special is not None:
        return run_coroutine(special)
    prepared = _prepare(target, options)
    stream = RowStream()
    results = ExperimentResults(
        prepared.record, [], [], prepared.store.url, store=prepared.store, stream=stream
    )
    if blocking:
        try:
            run_coroutine(_execute(prepared, stream))
        except ExperimentInterrupted as exc:  # the one line matters, not the event loop's frames
            raise exc.with_traceback(None) from None
        results.wait()
        return results
    context = contextvars.copy_context()  # tracing_context() and the current store come along
    thread = threading.Thread(
        target=context.run,
        args=(run_coroutine, _execute(prepared, stream)),
        name="assay-evaluate-background",
    )
    results._thread = thread
    thread.start()
    return results


def _upload(upload_results: bool | None, upload_runs: bool | None) -> bool:
    if upload_results is not None and upload_runs is not None:
        raise ValueError("pass upload_results= or its alias upload_runs=, not both")
    chosen = upload_runs if upload_results is None else upload_results
    if chosen is not None and not isinstance(chosen, bool):
        raise TypeError(
            f"upload_results= takes True (store the experiment) or False (keep it in memory "
            f"only); got {chosen!r}"
        )
    return True if chosen is None else chosen


def _dispatch(target: Any, options: _Options) -> Any:
    """A coroutine for the forms of ``target`` that are not a thing to run, else None."""
    if isinstance(target, tuple):
        if len(target) != 2:
            raise ValueError(
                f"Received invalid target. If a tuple is specified it must have length 2 (two "
                f"experiments to compare); got {len(target)}"
            )
        # experiment= names the comparison here (assay's; LangSmith refuses it)
        _refuse_options(options, "two existing experiments", ("summary_evaluators",), allowed=("experiment",))
        return _compare(target, options)
    if options.randomize_order:
        raise ValueError(
            "randomize_order=True applies when comparing two experiments: evaluate((exp_a, exp_b), ...)"
        )
    if isinstance(target, (str, uuid.UUID, TracerSession, ExperimentResults)):
        _refuse_options(options, "an existing experiment", ("experiment_prefix",))
        return _rescore(target, options)
    return None


def _refuse_options(
    options: _Options, what: str, also: tuple[str, ...], allowed: tuple[str, ...] = ()
) -> None:
    """Options that make a new experiment mean nothing for stored ones: refused, never ignored
    (LangSmith's rule and words)."""
    given = [
        name
        for name, passed in (
            ("num_repetitions", options.num_repetitions != 1),
            ("experiment", options.experiment is not None),
            ("upload_results", options.upload_given),
            ("data", options.data is not None),
            ("experiment_prefix", options.experiment_prefix is not None),
            ("summary_evaluators", bool(options.summary_evaluators)),
        )
        if passed
        and name not in allowed
        and (name in also or name not in ("experiment_prefix", "summary_evaluators"))
    ]
    if given:
        raise ValueError(
            f"Received invalid arguments. {', '.join(given)} should not be specified when target "
            f"is {what}: the stored rows are scored again as they are."
        )


async def _compare(experiments: tuple[Any, ...], options: _Options) -> Any:
    """``evaluate((exp_a, exp_b), evaluators=[...])``: LangSmith's comparative form."""
    from assay.evaluation._pairwise_evaluator import as_comparative_function
    from assay.evaluation._pairwise_run import aevaluate_comparative

    if options.summary_evaluators:
        raise ValueError("summary_evaluators= does not apply when comparing experiments")
    evaluators = [as_comparative_function(e) for e in _as_list(options.evaluators, "evaluators")]
    name = options.experiment if isinstance(options.experiment, str) else None
    if name is None and options.experiment_prefix:
        name = f"{options.experiment_prefix}-{uuid.uuid4().hex[:8]}"
    return await aevaluate_comparative(
        list(experiments),
        evaluators,
        _user_store(options),
        name=name,
        max_concurrency=_concurrency(options.max_concurrency),
        randomize_order=options.randomize_order,
    )


async def _rescore(experiment: Any, options: _Options) -> Any:
    """``evaluate("<experiment name>" | id | TracerSession | ExperimentResults, evaluators=[...])``
    re-scores a stored experiment."""
    from assay.evaluation._rescore import aevaluate_existing

    if isinstance(experiment, ExperimentResults):
        experiment = experiment.experiment_id
    elif isinstance(experiment, TracerSession):
        experiment = experiment.name
    return await aevaluate_existing(
        experiment,
        options.evaluators,
        options.summary_evaluators,
        options.metadata,
        options.max_concurrency,
        options.client,
        progress=options.progress,
    )


def _user_store(options: _Options) -> Store:
    """The client's store, else the default one (``ASSAY_DATABASE_URL`` or ./.assay)."""
    return options.client.store if options.client is not None else open_store()


def _stores(options: _Options) -> tuple[Store, Callable[[], Store]]:
    """Where the experiment is written, and how to reach the user's store for a stored
    dataset. With ``upload_results=False`` the user's store is opened only if the data
    names a stored dataset (nothing is created, nothing written); otherwise it is opened
    now and checked, since a damaged store is not written to."""
    if options.upload_results:
        user_store = _user_store(options)
        user_store.require_whole(thorough=options.resume)
        return user_store, lambda: user_store
    return _memory_store(), functools.cache(lambda: _user_store(options))


def _prepare(target: Any, options: _Options) -> _Prepared:
    """Everything that can fail on bad arguments, done before the first row runs."""
    _check_arguments(options)
    shard = _checked_shard(options)
    executor = _executor(options.executor)
    concurrency = _concurrency(options.max_concurrency)
    requested = _experiment_name_of(options.experiment)
    name = experiment_name(requested, options.experiment_prefix)
    store, user_store = _stores(options)
    row_evaluators = [bind_row_evaluator(e) for e in _as_list(options.evaluators, "evaluators")]
    summaries = [
        bind_summary_evaluator(e) for e in _as_list(options.summary_evaluators, "summary_evaluators")
    ]
    runner = TargetRunner(target)
    runner.check_signature()
    plan = ExperimentPlan(
        target=runner.name,
        evaluators=tuple(e.name for e in row_evaluators),
        summary_evaluators=tuple(s.name for s in summaries),
        num_repetitions=options.num_repetitions,
    )
    _warm_writer(store, options)
    try:
        with _fewer_collections():
            stored_name = requested if options.resume or shard.count > 1 else None
            resolved, source = _resolve(options.data, stored_name, user_store, store)
        _warm_writer_for_stored(store, options, resolved.count, shard)
        claim = ShardLease.claim(shard)
        record, created = open_experiment(
            store,
            name,
            resolved,
            plan,
            resume=options.resume,
            description=options.description,
            metadata=options.metadata,
            shards=shard.count,
            lease=claim,
        )
        runner.session_id = record.id  # LangSmith's runs name their project (experiment)
        lease = ShardLease.take(store, record, shard, wait=options.wait_for_lease, claim=claim, taken=created)
    finally:  # inline examples held back: committed now, by the writer process while the rows start
        store.release_held_examples()  # (not sooner: they would hold the write lock the run waits for)
    try:
        tally, feed, discarded = _feed_of(store, record, created, resolved, source, shard, options)
    except BaseException:
        lease.release("failed")
        raise
    lease.on_lost(feed.stop)
    return _Prepared(
        store,
        user_store() if options.upload_results or options.client is not None else store,
        record,
        RowPipeline(runner, row_evaluators),
        summaries,
        feed,
        tally,
        concurrency,
        options,
        lease,
        executor,
        discarded,
        created,
    )


def _warm_writer_for_stored(store: Store, options: _Options, examples: int, shard: Shard) -> None:
    """A stored dataset's run: its writer process started as soon as its size is known,
    before the experiment is created, not as its first row starts. Under load the
    process (an interpreter's start) was not ready by the first batch in 3 of 4 runs of
    1,024 latency-bound rows, which then encoded ~280 rows under the GIL the rows need."""
    if not isinstance(options.data, (list, tuple)) and not options.resume and shard.count == 1:
        store.warm_writer(examples * options.num_repetitions)


def _warm_writer(store: Store, options: _Options) -> None:
    """A list of inline data: the store may start its writer process now, on the other
    core, while this one stores the data (most of a second at a million rows), so that it
    is ready for the first batch. A resumed run has most of its rows stored: not then."""
    if isinstance(options.data, (list, tuple)) and not options.resume:
        store.warm_writer(len(options.data) * options.num_repetitions)


def _executor(given: Any) -> Executor | None:
    """The executor rows run on (None: threads and the event loop here). The executors
    package (its Ray part takes ~10 ms to import) is imported only when ``executor=`` or
    ``ASSAY_EXECUTOR`` names one."""
    if given is None and os.environ.get("ASSAY_EXECUTOR", "").strip().lower() in ("", "local"):
        return None
    from assay.evaluation.executor import resolve_executor

    return resolve_executor(given)


def _feed_of(
    store: Store,
    record: ExperimentRecord,
    created: bool,
    resolved: ResolvedData,
    source: Store,
    shard: Shard,
    options: _Options,
) -> tuple[Tally, RowFeed, int]:
    """Under the lease: reopen a stored experiment, and plan the rows not stored yet. A
    shard always resumes its own stored rows; its tally starts empty (the experiment's
    figures are computed from the store when the shard ends)."""
    if not created:
        store.reopen_experiment(record.id)
    sharded = shard.count > 1
    discarded = 0
    if options.resume:  # rows whose target failed (a rate limit, an outage) are run again
        discarded = store.discard_failed_runs(record.id, (shard.index, shard.count) if sharded else None)
    reps = options.num_repetitions
    total = shard.rows_of(resolved.count * reps)
    with _fewer_collections():
        tally = tally_of_stored(store.iter_scores(record.id)) if options.resume and not sharded else Tally()
        done = done_keys(store.stored_keys(record.id), reps) if options.resume or sharded else set()
    if sharded:
        done = {index for index in done if shard.holds(index)}
    return tally, RowFeed(resolved.examples(source), reps, done, total, shard), discarded


def _budget(max_cost: float | None) -> contextlib.AbstractContextManager[Any]:
    """The judge budget of a run with ``max_cost`` (its module loads only then)."""
    if max_cost is None:
        return contextlib.nullcontext()
    from assay._budget import CostBudget, use_budget

    return use_budget(CostBudget(max_cost))


def _memory_store() -> Store:
    """Where an experiment with ``upload_results=False`` lives: gone when the results are."""
    return open_store("sqlite://")


class _Silent:
    """The progress bar of ``progress=False``: without importing the terminal report
    (rich takes ~30 ms to import, a tenth of a short experiment)."""

    enabled = False

    def __init__(self, total: int) -> None:
        self.total = total

    def __enter__(self) -> _Silent:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def advance(self, row: ExperimentRow) -> None:
        return None


def _progress(total: int, done: int, enabled: bool | None) -> Any:
    if enabled is False:
        return _Silent(total)
    from assay.report.terminal import Progress

    return Progress(total=total, done=done, enabled=enabled)


async def _execute(prepared: _Prepared, stream: RowStream) -> None:
    """Run the rows and the summaries; the outcome (or the error) goes to ``stream``."""
    store, record, options = prepared.store, prepared.record, prepared.options
    feed = prepared.feed
    bar = _progress(feed.total, feed.total - feed.remaining, options.progress)
    lease = prepared.lease
    whole = lease.shard.count == 1
    fresh = whole and feed.remaining == feed.total  # this run computes every row
    kept = KeptRows() if fresh else None  # this run's rows: handed over, not read back

    def on_row(row: ExperimentRow) -> None:
        if kept is not None:
            kept.add(row)
        if bar.enabled:  # a silent bar counts nothing anyone reads
            bar.advance(row)
        if not options.blocking:
            stream.add(row)

    settings = RunSettings(
        prepared.concurrency,
        options.error_handling == "raise",
        on_row,
        whole,
        prepared.executor,
        lease.fence,
    )
    try:
        with use_store(prepared.cache_store), _budget(options.max_cost), bar, _fewer_collections():
            if options.retry_errors:
                await _retry_errors(prepared)
            stats = await run_rows(prepared.pipeline, feed, store, record, settings, prepared.tally)
            # A shard ends here (the last one then tallies every shard's rows); a whole
            # run holds its lease through its summaries and ends with the experiment.
            stats, complete = (stats, True) if whole else end_shard(store, record, lease, stats)
            summary: list[EvaluationResult] = []
            if complete and prepared.summaries:  # the last shard: every shard's rows are stored
                available = summary_arguments(store, record, stats.rows)
                if kept is not None:
                    available.update(kept.lists(stats.rows, wanted_fields(prepared.summaries)))
                summary = await run_summaries(prepared.summaries, available)
        if complete:  # else "partial", stored as the shard ended
            if summary or not prepared.created:  # a new experiment has none to replace (a commit saved)
                store.replace_summary_results(record.id, summary)
            if whole:  # the lease ends and the experiment completes in one transaction
                lease.finish(completes=True)
            else:
                store.finish_experiment(record.id, "completed", lease.fence)
    except BaseException as exc:
        if lease.lost or fenced(exc):
            # another process runs the shard now: the status is its to set, not ours
            stream.finish(None, lease.lost_error())
            return
        status = "interrupted" if is_interrupt(exc) else "failed"
        release_quietly(lease, status)
        # taken over meanwhile (its status), or the store unreachable (the lease then
        # expires, and the experiment reads as stopped): the run's own error is the news
        with contextlib.suppress(LeaseFencedError, StorageFault):
            store.finish_experiment(record.id, status, lease.fence)
        if is_interrupt(exc):
            stored = store.count_rows(record.id) if whole else shard_rows_stored(store, record, lease.shard)
            interrupted = interrupted_error(record.name, stored, bar.total)
            stream.finish(None, interrupted)
            raise_interrupted(exc, interrupted)
        stream.finish(None, exc)
        if not isinstance(exc, Exception):
            raise
        return
    final = store.get_experiment(id=record.id) or record
    if not complete:
        # an earlier shard reports the experiment as it left it, whatever other shards did
        # since (the last one completed it, a late one started and set it running), so
        # that only the last shard judges the gates
        final = final.model_copy(update={"status": "partial"})
    produced = kept.rows(stats.rows) if kept is not None else None
    rows: Sequence[ExperimentRow] = stored_rows(store, final, stats.rows) if produced is None else produced
    results = ExperimentResults(final, rows, summary, store.url, stats=stats, store=store)
    if bar.enabled:
        from assay.report.terminal import print_report

        print_report(results)
    elif options.progress is None:  # not a terminal (a CI log): the same report, as plain text
        from assay.report.plain import plain_report

        print(plain_report(results), file=sys.stderr, flush=True)
    if not whole and (bar.enabled or options.progress is None):
        print(shard_line(store, final, lease.shard), file=sys.stderr, flush=True)
    stream.finish(Outcome(final, rows, summary, stats))


async def _retry_errors(prepared: _Prepared) -> None:
    """Before the rows not stored yet: the stored evaluator errors, run again."""
    from assay.evaluation._retry import retry_evaluator_errors  # only a retry needs it

    store, record, lease = prepared.store, prepared.record, prepared.lease
    evaluators = prepared.pipeline.evaluators
    retried = await retry_evaluator_errors(
        store, record, evaluators, lease.shard, prepared.concurrency, lease.fence
    )
    retried.targets = prepared.rerun_targets
    if lease.shard.count == 1:  # the figures the run goes on from include the new results
        prepared.tally = tally_of_stored(store.iter_scores(record.id))
    if prepared.options.progress is not False:
        print(f"assay: {record.name!r}: {retried.line()}", file=sys.stderr, flush=True)


class _FewerCollections:
    """An experiment allocates many small long-lived records (runs, results), which makes
    CPython's young-generation collector run constantly for nothing; raise its threshold
    while any experiment runs (a quarter of the wall time on a 10,000-row run), and restore
    the caller's setting when the last one ends (experiments may overlap), moving what the
    run kept to the old generation."""

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
                    # The run's objects are not moved to the old generation (it saved
                    # ~0.1 s of CPU over a 10,000-row list(results)): garbage left there
                    # waits for a full collection, and stores' connections with it (a
                    # suite's worker held 1,000+ descriptors).


_fewer_collections = _FewerCollections()


def _as_list(evaluators: Sequence[Any] | None, parameter: str) -> list[Any]:
    if evaluators is None:
        return []
    if callable(evaluators) or isinstance(evaluators, (str, bytes)) or not hasattr(evaluators, "__iter__"):
        raise TypeError(f"{parameter}= takes a list, e.g. {parameter}=[my_evaluator]; got {evaluators!r}")
    return list(evaluators)


def _experiment_name_of(experiment: Any) -> str | None:
    """``experiment=`` is a name, or (LangSmith) a project record with a ``name``."""
    if experiment is None or isinstance(experiment, str):
        return experiment
    name = getattr(experiment, "name", None)
    if isinstance(name, str):
        return name
    raise TypeError(f"experiment= takes an experiment name (or a TracerSession); got {experiment!r}")


def _check_arguments(options: _Options) -> None:
    experiment = _experiment_name_of(options.experiment)
    if experiment is not None and not experiment.strip():
        raise ValueError("experiment= must be a non-empty name (or None to generate one)")
    repetitions = options.num_repetitions
    if not isinstance(repetitions, int) or isinstance(repetitions, bool) or repetitions < 1:
        raise ValueError(f"num_repetitions must be a positive integer, got {repetitions!r}")
    if options.error_handling not in ("log", "ignore", "raise"):
        raise ValueError(
            f"error_handling must be 'log' (or LangSmith's 'ignore', the same here) or 'raise', "
            f"got {options.error_handling!r}"
        )
    if options.resume and not experiment:
        raise ValueError("resume=True needs experiment='<name>' naming the experiment to resume")
    if options.retry_errors and not options.resume:
        raise ValueError(
            "retry_errors=True goes with resume=True: it runs again what a stored experiment got wrong"
        )
    if options.resume and not options.upload_results:
        raise ValueError("resume=True continues a stored experiment; it cannot go with upload_results=False")
    if options.metadata is not None and not isinstance(options.metadata, dict):
        raise TypeError(f"metadata= takes a dict, got {type(options.metadata).__name__}")


def _checked_shard(options: _Options) -> Shard:
    shard = shard_argument(options.shard)
    if shard.count > 1 and not _experiment_name_of(options.experiment):
        raise ValueError(
            f"shard={shard.index, shard.count} needs experiment='<name>': the name every shard "
            "writes into (with assay run: --experiment NAME)"
        )
    if shard.count > 1 and not options.upload_results:
        raise ValueError("shard= splits a stored experiment; it cannot go with upload_results=False")
    return shard


def _resolve(
    data: Any, resume_name: str | None, user_store: Callable[[], Store], store: Store
) -> tuple[ResolvedData, Store]:
    """The data to run, and the store its examples are read from: the user's for a stored
    dataset, the experiment's own (in memory with ``upload_results=False``) for inline data."""
    if data is None and resume_name:
        resumed = _data_of_stored_experiment(resume_name, user_store())
        if resumed is not None:
            return resumed, user_store()
    if data is None:
        raise ValueError("data= is required: a dataset name or id, a Dataset, a file path, or a list")
    if _names_stored_dataset(data) and user_store() is not store:
        return resolve_data(data, user_store()), user_store()  # read the user's; write nothing there
    return resolve_data(data, store), store


def _data_of_stored_experiment(name: str, user_store: Store) -> ResolvedData | None:
    stored = user_store.get_experiment(name=name)
    if stored is None or stored.dataset_id is None:
        return None
    dataset = user_store.get_dataset(id=stored.dataset_id)
    if dataset is None:
        return None
    version = stored.dataset_version
    return ResolvedData(dataset, version or 0, user_store.count_examples(dataset.id, version=version))


def _names_stored_dataset(data: Any) -> bool:
    from pathlib import Path

    from assay.evaluation._data import FILE_SUFFIXES
    from assay.schemas import Dataset

    if isinstance(data, (Dataset, uuid.UUID)):
        return True
    return isinstance(data, str) and not data.lower().endswith(FILE_SUFFIXES) and not isinstance(data, Path)


def _concurrency(max_concurrency: int | None) -> int:
    if not max_concurrency:
        return 4 * (os.cpu_count() or 1)
    if max_concurrency < 0:
        raise ValueError(f"max_concurrency must be positive, got {max_concurrency}")
    return max_concurrency
