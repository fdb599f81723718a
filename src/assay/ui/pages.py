"""The HTML pages. Each renders the same objects the JSON API returns."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from assay.store.read.attachments import files_by_example
from assay.ui import queries
from assay.ui.annotate.attach import with_human_cells, with_human_metrics
from assay.ui.annotate.judged import judge_panel
from assay.ui.annotate.routes import annotator_of_request, form_context
from assay.ui.lookup import Database, DatasetParam, ExperimentParam, experiments
from assay.ui.models import CompareShow
from assay.ui.params import PagingParams, RowCursorParam, RowFilterParams, VersionParam, blank_is_none
from assay.ui.queries.traces import trace_detail, trace_list
from assay.ui.reading.files import listed_files
from assay.ui.reading.row import reference_diff, target_traceback
from assay.ui.trend.series import trends

__all__ = [
    "compare_page",
    "dataset_list",
    "dataset_page",
    "experiment_list",
    "experiment_page",
    "home",
    "render",
    "row_page",
    "trace_page",
]


router = APIRouter(include_in_schema=False, default_response_class=HTMLResponse)


def render(request: Request, template: str, **context: Any) -> Response:
    response: Response = request.app.state.templates.TemplateResponse(request, template, context)
    return response


@router.get("/")
def home() -> Response:
    return RedirectResponse("/experiments", status_code=307)


@router.get("/experiments")
def experiment_list(
    request: Request,
    db: Database,
    paging: PagingParams,
    q: str | None = None,
    dataset: str | None = None,
    sort: str = "created",
    order: Literal["asc", "desc"] = "desc",
) -> Response:
    listing = queries.list_experiments(
        db,
        q=blank_is_none(q),
        dataset_id=blank_is_none(dataset),
        page=paging.page,
        per_page=paging.per_page,
        sort=sort,
        order=order,
    )
    datasets = queries.list_datasets(db)
    return render(request, "experiments.html", listing=listing, datasets=datasets, nav="experiments")


@router.get("/experiments/{ref}")
def experiment_page(
    request: Request,
    experiment: ExperimentParam,
    db: Database,
    row_filter: RowFilterParams,
    paging: PagingParams,
    after: RowCursorParam,
    judge: str | None = None,
    human: str | None = None,
) -> Response:
    detail = with_human_metrics(db, queries.experiment_detail(db, experiment))
    rows = queries.row_page(
        db, experiment, row_filter, page=paging.page, per_page=paging.per_page, after=after
    )
    rows = with_human_cells(db, rows)
    judges = judge_panel(db, detail, blank_is_none(judge), blank_is_none(human))
    traces = trace_list(db, experiment)
    return render(
        request, "experiment.html", detail=detail, rows=rows, judges=judges, traces=traces, nav="experiments"
    )


@router.get("/experiments/{ref}/traces/{run_id}")
def trace_page(request: Request, experiment: ExperimentParam, run_id: str, db: Database) -> Response:
    """A trace ``Client.create_run`` stored: its runs as a tree with their timeline."""
    run = trace_detail(db, experiment, run_id)
    return render(request, "trace.html", experiment=experiment, run=run, run_id=run_id, nav="experiments")


@router.get("/experiments/{ref}/rows/{run_id}")
def row_page(request: Request, experiment: ExperimentParam, run_id: str, db: Database) -> Response:
    row = queries.row_detail(db, experiment, run_id)
    form = form_context(request, db, row, annotator_of_request(request))
    datasets = queries.list_datasets(db)
    return render(
        request,
        "row.html",
        row=row,
        form=form,
        datasets=datasets,
        target_traceback=target_traceback(db, row.run_id),
        reference_diff=reference_diff(row),
        files=listed_files(db, row.experiment.dataset_id, row.example_id, row.experiment.dataset_version),
        nav="experiments",
    )


@router.get("/compare")
def compare_page(
    request: Request,
    db: Database,
    paging: PagingParams,
    e: Annotated[list[str], Query()] = [],  # noqa: B006 - FastAPI copies defaults
    show: CompareShow = "all",
    metric: str | None = None,
) -> Response:
    refs = [ref for ref in e if ref.strip()]
    if not refs:
        listing = queries.list_experiments(db, page=1, per_page=200)
        return render(request, "compare_pick.html", listing=listing, nav="compare")
    page = queries.compare_page(
        db,
        experiments(refs, db),
        show=show,
        metric=blank_is_none(metric),
        page=paging.page,
        per_page=paging.per_page,
    )
    return render(request, "compare.html", cmp=page, nav="compare")


@router.get("/datasets")
def dataset_list(request: Request, db: Database) -> Response:
    return render(request, "datasets.html", datasets=queries.list_datasets(db), nav="datasets")


@router.get("/datasets/{ref}")
def dataset_page(
    request: Request,
    dataset: DatasetParam,
    db: Database,
    paging: PagingParams,
    version: VersionParam,
    q: str | None = None,
) -> Response:
    examples = queries.example_page(
        db, dataset, version=version, q=blank_is_none(q), page=paging.page, per_page=paging.per_page
    )
    series = trends(db, dataset.id)
    shown = [example.id for example in examples.examples]
    files = files_by_example(db, dataset.id, examples.version, shown)
    return render(request, "dataset.html", data=examples, trends=series, files=files, nav="datasets")
