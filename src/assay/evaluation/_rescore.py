"""Re-scoring a stored experiment: new evaluators over the stored runs, the target not called.

Each result a re-score writes carries ``evaluator_info["evaluator"]``, the evaluator's
name, so an interrupted re-score resumes where it stopped: rows that already hold that
evaluator's results are skipped. The experiment's config records the evaluators added
(``rescored``), so a second re-score with the same evaluator replaces only when asked.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from assay._aio import run_coroutine
from assay.errors import ExperimentError, NotFoundError
from assay.evaluation._arguments import as_list, concurrency, known_keywords
from assay.evaluation._binding import RowEvaluator, bind_row_evaluator, bind_summary_evaluator
from assay.evaluation._interrupt import (
    ExperimentInterrupted,
    interrupted_error,
    is_interrupt,
    raise_interrupted,
)
from assay.evaluation._paged import summary_arguments
from assay.evaluation._results import ExperimentResults
from assay.evaluation._rows import in_thread
from assay.evaluation._runner import run_summaries
from assay.evaluation._tally import tally_of_stored
from assay.evaluation.types import HasStore
from assay.schemas import EvaluationResult
from assay.store.base import Store
from assay.store.current import use_store
from assay.store.open import open_store
from assay.store.records import ExperimentRecord, ExperimentRow

_CHUNK = 256  # rows scored, then written in one transaction: an interrupt loses at most these


@known_keywords
async def aevaluate_existing(
    experiment: Any,
    /,
    evaluators: Sequence[Any] | None = None,
    summary_evaluators: Sequence[Any] | None = None,
    metadata: dict[str, Any] | None = None,
    max_concurrency: int | None = 0,
    client: HasStore | None = None,
    load_nested: bool = False,
    *,
    replace: bool = False,
    progress: bool | None = None,
) -> ExperimentResults:
    """Score the stored runs of ``experiment`` (a name, id or record) with new evaluators.

    The target is not called. Results are stored with the experiment; an evaluator whose
    results are already there is refused unless ``replace=True``. Interrupted, it resumes:
    call it again with the same arguments. ``load_nested`` is LangSmith's; runs are always
    loaded whole here.
    """
    from rich.console import Console

    from assay.report.plain import plain_report
    from assay.report.terminal import Progress, print_report

    store = client.store if client is not None else open_store()
    record = _find_experiment(store, experiment)
    row_evaluators = [bind_row_evaluator(e) for e in as_list(evaluators, "evaluators")]
    summaries = [bind_summary_evaluator(e) for e in as_list(summary_evaluators, "summary_evaluators")]
    if not row_evaluators and not summaries:
        raise ValueError("evaluate_existing needs evaluators= or summary_evaluators=")
    names = [e.name for e in row_evaluators]
    tokens = _start(record, names, replace, metadata)
    store.update_experiment_config(record.id, record.config)
    rows = store.load_rows(record)
    todo = [(row, [e for e in row_evaluators if not _holds(row, e.name, tokens[e.name])]) for row in rows]
    todo = [(row, pending) for row, pending in todo if pending]
    bar = Progress(total=len(rows), done=len(rows) - len(todo), enabled=progress)
    written = [0]
    try:
        with use_store(store), bar:
            await _score_rows(
                todo, store, record, concurrency(max_concurrency), replace, bar, tokens, written
            )
            rows = store.load_rows(record)
            summary = (
                await run_summaries(summaries, summary_arguments(store, record, len(rows)))
                if summaries
                else []
            )
    except BaseException as exc:
        if is_interrupt(exc):
            _refresh_stats(store, record)  # the rows written so far count
            stored = len(rows) - len(todo) + written[0]
            raise_interrupted(exc, interrupted_error(record.name, stored, len(rows), "rescore"))
        raise
    _finish(record, names)
    store.update_experiment_config(record.id, record.config)
    if summaries:
        kept = [r for r in store.load_summary_results(record.id) if r.key not in {s.key for s in summary}]
        store.replace_summary_results(record.id, kept + summary)
    final = store.get_experiment(id=record.id) or record
    stats = _refresh_stats(store, record)
    results = ExperimentResults(
        final,
        _new_first(rows, names, tokens),
        store.load_summary_results(record.id),
        store.url,
        stats=stats,
        store=store,
    )
    # The report goes to stderr, so a script's own output on stdout stays clean.
    if bar.enabled:
        print_report(results, console=Console(stderr=True))
    elif progress is None:  # not a terminal (a CI log): the same report, as plain text
        print(plain_report(results), file=sys.stderr, flush=True)
    return results


def _new_first(
    rows: list[ExperimentRow], evaluators: list[str], tokens: dict[str, str]
) -> list[ExperimentRow]:
    """Each row's results with this call's evaluators first (in their order), then those stored
    before: ``row["evaluation_results"]["results"][0]`` is the new score, as in LangSmith."""
    order = {name: position for position, name in enumerate(evaluators)}

    def rank(result: EvaluationResult) -> int:
        name = str(result.evaluator_info.get("evaluator", ""))
        if name in order and result.evaluator_info.get("rescore") == tokens.get(name):
            return order[name]
        return len(order)

    for row in rows:
        row.results = sorted(row.results, key=rank)
    return rows


@known_keywords
def evaluate_existing(
    experiment: Any,
    /,
    evaluators: Sequence[Any] | None = None,
    summary_evaluators: Sequence[Any] | None = None,
    metadata: dict[str, Any] | None = None,
    max_concurrency: int | None = 0,
    client: HasStore | None = None,
    load_nested: bool = False,
    blocking: bool = True,
    *,
    replace: bool = False,
    progress: bool | None = None,
) -> ExperimentResults:
    """The synchronous face of :func:`aevaluate_existing` (``blocking`` is LangSmith's; always True)."""
    coroutine = aevaluate_existing(
        experiment,
        evaluators,
        summary_evaluators,
        metadata,
        max_concurrency,
        client,
        load_nested,
        replace=replace,
        progress=progress,
    )
    try:
        results: ExperimentResults = run_coroutine(coroutine)
    except ExperimentInterrupted as exc:  # the one line matters, not the event loop's frames
        raise exc.with_traceback(None) from None
    return results


def _refresh_stats(store: Store, record: ExperimentRecord) -> Any:
    """The experiment's stored figures, computed again to include the new results."""
    stats = tally_of_stored(store.iter_scores(record.id)).stats(final=True)
    store.write_stats(record.id, stats)
    return stats


def _find_experiment(store: Store, experiment: Any) -> ExperimentRecord:
    if isinstance(experiment, ExperimentRecord):
        return experiment
    if isinstance(experiment, ExperimentResults):
        return experiment.experiment
    found = None
    if isinstance(experiment, uuid.UUID):
        found = store.get_experiment(id=experiment)
    elif isinstance(experiment, str):
        found = store.get_experiment(name=experiment)
        if found is None:
            try:
                found = store.get_experiment(id=uuid.UUID(experiment))
            except ValueError:
                pass
    else:
        raise TypeError(f"experiment must be a name, an id or ExperimentResults, got {experiment!r}")
    if found is None:
        raise NotFoundError(f"no experiment {experiment!r} in {store.url}")
    return found


def _start(
    record: ExperimentRecord, names: list[str], replace: bool, metadata: dict[str, Any] | None
) -> dict[str, str]:
    """Mark the evaluators as being re-scored; a pending (interrupted) re-score keeps its token,
    so its finished rows are skipped. Returns evaluator name -> token."""
    config = record.config
    pending: dict[str, str] = dict(config.get("rescoring", {}))
    present = set(config.get("evaluators", [])) | set(config.get("rescored", []))
    clashing = sorted(name for name in present.intersection(names) if name not in pending)
    if clashing and not replace:
        raise ExperimentError(
            f"experiment {record.name!r} already has results from {', '.join(map(repr, clashing))}; "
            "pass replace=True (assay rescore --replace) to replace them"
        )
    for name in names:
        pending.setdefault(name, uuid.uuid4().hex[:12])
    config["rescoring"] = pending
    if metadata:
        config["rescore_metadata"] = {**config.get("rescore_metadata", {}), **metadata}
    return {name: pending[name] for name in names}


def _finish(record: ExperimentRecord, names: list[str]) -> None:
    config = record.config
    pending = {k: v for k, v in config.get("rescoring", {}).items() if k not in names}
    config["rescoring"] = pending
    config["rescored"] = sorted(set(config.get("rescored", [])) | set(names))


def _holds(row: ExperimentRow, evaluator: str, token: str) -> bool:
    return any(
        r.evaluator_info.get("rescore") == token and r.evaluator_info.get("evaluator") == evaluator
        for r in row.results
    )


async def _score_rows(
    todo: list[tuple[ExperimentRow, list[RowEvaluator]]],
    store: Store,
    record: ExperimentRecord,
    workers: int,
    replace: bool,
    bar: Any,
    tokens: dict[str, str],
    written: list[int],
) -> None:
    """Score ``todo`` chunk by chunk; each chunk is written in one transaction, counted in ``written``."""
    limit = asyncio.Semaphore(workers)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="assay-rescore") as pool:

        async def score(row: ExperimentRow, pending: list[RowEvaluator]) -> list[EvaluationResult]:
            async with limit:
                results: list[EvaluationResult] = []
                for evaluator in pending:
                    if evaluator.is_async:
                        part = await evaluator.call_async(row.run, row.example)
                    else:
                        part = await in_thread(pool, evaluator.call_sync, row.run, row.example)
                    results.extend(_tagged(part, evaluator.name, tokens[evaluator.name]))
                return results

        for start in range(0, len(todo), _CHUNK):
            chunk = todo[start : start + _CHUNK]
            scored = await asyncio.gather(*(score(row, pending) for row, pending in chunk))
            if not replace:
                _refuse_overwrite(record, chunk, scored)
            store.write_results(
                record.id, [(row.run.id, new) for (row, _), new in zip(chunk, scored)], replace=replace
            )
            written[0] += len(chunk)
            for row, _ in chunk:
                bar.advance(row)


def _tagged(results: list[EvaluationResult], evaluator: str, token: str) -> list[EvaluationResult]:
    tag = {"evaluator": evaluator, "rescore": token}
    return [r.model_copy(update={"evaluator_info": {**r.evaluator_info, **tag}}) for r in results]


def _refuse_overwrite(
    record: ExperimentRecord,
    chunk: list[tuple[ExperimentRow, list[RowEvaluator]]],
    scored: list[list[EvaluationResult]],
) -> None:
    """An evaluator may return keys other than its name; refuse one that would shadow a stored key."""
    for (row, _), new in zip(chunk, scored):
        stored = {r.key for r in row.results}
        clash = sorted(stored.intersection(r.key for r in new))
        if clash:
            raise ExperimentError(
                f"experiment {record.name!r} already holds results with key "
                f"{', '.join(map(repr, clash))}; pass replace=True (assay rescore --replace) to replace them"
            )
