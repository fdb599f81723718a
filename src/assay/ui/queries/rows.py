"""An experiment's rows as pages show them: the filtered, sorted, paginated table
(``assay.store.read.rows`` reads it) and one row in full. Here the filter's parameters
are checked and the stored text becomes previews and values."""

from __future__ import annotations

from collections import defaultdict

from assay.store.read import annotation, runs
from assay.store.read import rows as stored
from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.metrics import metric_info, metric_keys
from assay.store.read.walk import Cursor, encode_cursor
from assay.ui.errors import BadRequest, NotFound
from assay.ui.models import (
    ExperimentSummary,
    FeedbackView,
    ResultView,
    RowDetail,
    RowFilter,
    RowPage,
    RowSummary,
    ScoreCell,
)
from assay.ui.queries._sql import loads, offset, preview
from assay.ui.queries.trace import run_tree

__all__ = [
    "feedback_of",
    "reference_previews",
    "results_of",
    "row_detail",
    "row_page",
    "score_cells",
]


def row_page(
    db: ReadOnlyDatabase,
    experiment: ExperimentSummary,
    row_filter: RowFilter,
    *,
    page: int,
    per_page: int,
    after: Cursor | None = None,
) -> RowPage:
    """One page of rows; ``after`` (the previous page's last row, as its "next" link
    carries it) starts an index-walked page there instead of walking to its offset."""
    keys = metric_keys(db, experiment.id)
    lower = _lower_keys(db, experiment.id, row_filter, keys)
    _check_sort(row_filter.sort, keys)
    found = stored.row_page(
        db,
        experiment.id,
        experiment.rows,
        _query(row_filter),
        keys=keys,
        lower=lower,
        limit=per_page,
        offset=offset(page, per_page),
        after=after,
    )
    scores = score_cells(db, [run.id for run in found.runs])
    references = reference_previews(db, experiment, [run.example_id for run in found.runs])
    rows = [
        RowSummary(
            run_id=run.id,
            example_id=run.example_id,
            repetition=run.repetition,
            position=run.position,
            inputs=preview(run.inputs),
            outputs=preview(run.outputs),
            reference=references.get(run.example_id, ""),
            error=run.error,
            latency_ms=run.latency_ms,
            scores=scores.get(run.id, []),
        )
        for run in found.runs
    ]
    return RowPage(
        experiment=experiment,
        filter=row_filter,
        metric_keys=keys,
        total=found.total,
        page=page,
        per_page=per_page,
        rows=rows,
        next_after=None if found.next_after is None else encode_cursor(found.next_after),
    )


def _query(row_filter: RowFilter) -> stored.RowQuery:
    return stored.RowQuery(
        failed=row_filter.failed,
        metric=row_filter.metric,
        below=row_filter.below,
        worse_than=row_filter.worse_than,
        thresholds=row_filter.thresholds,
        q=row_filter.q,
        sort=row_filter.sort,
        order=row_filter.order,
    )


def _lower_keys(db: ReadOnlyDatabase, experiment_id: str, row_filter: RowFilter, keys: list[str]) -> set[str]:
    """The lower-is-better metrics, once the filter's metric names are checked."""
    for name in ("below", "worse_than"):
        if getattr(row_filter, name) is not None and row_filter.metric is None:
            raise BadRequest(f"the {name!r} filter needs a 'metric' to compare")
    if row_filter.metric is not None:
        _check_metric(row_filter.metric, keys)
    for key in row_filter.thresholds:
        _check_metric(key, keys)
    return {key for key in keys if metric_info(db, experiment_id, key).direction == "lower"}


def _check_sort(sort: str, keys: list[str]) -> None:
    if sort.startswith("metric:"):
        _check_metric(sort.removeprefix("metric:"), keys)
    elif sort not in stored.SORTS:
        accepted = ", ".join([*stored.SORTS, "metric:<key>"])
        raise BadRequest(f"unknown sort {sort!r}; accepted: {accepted}")


def _check_metric(key: str, keys: list[str]) -> None:
    if key not in keys:
        known = ", ".join(keys) or "none"
        raise BadRequest(f"unknown metric {key!r}; this experiment's metrics: {known}")


def score_cells(db: ReadOnlyDatabase, run_ids: list[str]) -> dict[str, list[ScoreCell]]:
    """Each run's results, as compact cells, in the order they were written."""
    cells: dict[str, list[ScoreCell]] = defaultdict(list)
    for result in stored.result_previews(db, run_ids):
        cells[result.run_id].append(
            ScoreCell(
                key=result.key,
                score=None if result.error else result.score,
                value=preview(result.value) or None,
                error=result.error,
            )
        )
    return cells


def reference_previews(
    db: ReadOnlyDatabase, experiment: ExperimentSummary, example_ids: list[str]
) -> dict[str, str]:
    """Reference outputs of the examples, as of the dataset version the experiment ran on."""
    if experiment.dataset_id is None:
        return {}
    found = stored.reference_outputs(db, experiment.dataset_id, experiment.dataset_version, example_ids)
    return {example_id: preview(outputs) for example_id, outputs in found.items()}


def row_detail(db: ReadOnlyDatabase, experiment: ExperimentSummary, run_id: str) -> RowDetail:
    run = runs.run(db, experiment.id, run_id)
    if run is None:
        raise NotFound(f"experiment {experiment.name!r} has no row with run id {run_id!r}")
    example = (
        runs.example_text(db, experiment.dataset_id, experiment.dataset_version, run.example_id)
        if experiment.dataset_id is not None
        else None
    )
    previous_id, next_id = runs.neighbours(db, experiment.id, run.position, run.repetition)
    return RowDetail(
        experiment=experiment,
        run_id=run.id,
        example_id=run.example_id,
        repetition=run.repetition,
        position=run.position,
        inputs=loads(run.inputs),
        outputs=loads(run.outputs),
        reference_outputs=loads(example.outputs) if example else None,
        example_metadata=loads(example.metadata) if example else None,
        error=run.error,
        run=run_tree(run),
        results=results_of(db, run_id),
        feedback=feedback_of(db, run_id),
        previous_run_id=previous_id,
        next_run_id=next_id,
    )


def results_of(db: ReadOnlyDatabase, run_id: str) -> list[ResultView]:
    return [
        ResultView(
            key=row.key,
            score=None if row.error else row.score,
            value=loads(row.value),
            feedback=row.feedback,
            comment=row.comment,
            correction=loads(row.correction),
            metadata=loads(row.metadata),
            evaluator_info=loads(row.evaluator_info),
            error=row.error,
        )
        for row in runs.results(db, run_id)
    ]


def feedback_of(db: ReadOnlyDatabase, run_id: str) -> list[FeedbackView]:
    """Feedback on the run (none in a store made before feedback existed)."""
    return [
        FeedbackView(
            key=row.key,
            score=row.score,
            value=loads(row.value),
            comment=row.comment,
            correction=loads(row.correction),
            source=loads(row.feedback_source),
            created_at=row.created_at,
        )
        for row in annotation.run_feedback(db, run_id)
    ]
