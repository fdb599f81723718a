"""The JSON API: the data behind every page, for scripts and other tools.

Its OpenAPI description is served at ``/api/openapi.json``; docs/ui.md lists the routes.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query

from assay.ui import queries
from assay.ui.annotate.attach import with_human_cells, with_human_metrics
from assay.ui.lookup import Database, DatasetParam, ExperimentParam, experiments
from assay.ui.models import (
    ComparePage,
    CompareShow,
    DatasetSummary,
    ExamplePage,
    ExperimentDetail,
    ExperimentList,
    RowDetail,
    RowPage,
)
from assay.ui.params import PagingParams, RowCursorParam, RowFilterParams, VersionParam, blank_is_none

__all__ = [
    "compare",
    "dataset_examples",
    "experiment_detail",
    "experiment_row",
    "experiment_rows",
    "list_datasets",
    "list_experiments",
]


router = APIRouter(prefix="/api", tags=["api"])


@router.get("/datasets", response_model=list[DatasetSummary], summary="Every dataset")
def list_datasets(db: Database) -> list[DatasetSummary]:
    return queries.list_datasets(db)


@router.get("/datasets/{ref}/examples", response_model=ExamplePage, summary="A dataset's examples")
def dataset_examples(
    dataset: DatasetParam,
    db: Database,
    paging: PagingParams,
    version: VersionParam,
    q: Annotated[str | None, Query(description="text searched in examples")] = None,
) -> ExamplePage:
    return queries.example_page(
        db, dataset, version=version, q=blank_is_none(q), page=paging.page, per_page=paging.per_page
    )


@router.get("/experiments", response_model=ExperimentList, summary="Experiments, newest first")
def list_experiments(
    db: Database,
    paging: PagingParams,
    q: Annotated[str | None, Query(description="text searched in names")] = None,
    dataset: Annotated[str | None, Query(description="only this dataset's (id)")] = None,
    sort: Annotated[
        str, Query(description="created, name, dataset, status, rows, errors or metric:<key>")
    ] = "created",
    order: Literal["asc", "desc"] = "desc",
) -> ExperimentList:
    return queries.list_experiments(
        db,
        q=blank_is_none(q),
        dataset_id=blank_is_none(dataset),
        page=paging.page,
        per_page=paging.per_page,
        sort=sort,
        order=order,
    )


@router.get(
    "/experiments/{ref}",
    response_model=ExperimentDetail,
    summary="An experiment: metrics with 95% CIs, distributions, summary results",
)
def experiment_detail(experiment: ExperimentParam, db: Database) -> ExperimentDetail:
    return with_human_metrics(db, queries.experiment_detail(db, experiment))


@router.get(
    "/experiments/{ref}/rows",
    response_model=RowPage,
    summary="An experiment's rows: filtered, sorted and paginated",
)
def experiment_rows(
    experiment: ExperimentParam,
    db: Database,
    row_filter: RowFilterParams,
    paging: PagingParams,
    after: RowCursorParam,
) -> RowPage:
    rows = queries.row_page(
        db, experiment, row_filter, page=paging.page, per_page=paging.per_page, after=after
    )
    return with_human_cells(db, rows)


@router.get(
    "/experiments/{ref}/rows/{run_id}",
    response_model=RowDetail,
    summary="One row in full: inputs, outputs, reference, trace and every result",
)
def experiment_row(experiment: ExperimentParam, run_id: str, db: Database) -> RowDetail:
    return queries.row_detail(db, experiment, run_id)


@router.get(
    "/compare",
    response_model=ComparePage,
    summary="Experiments on one dataset side by side; the first is the baseline",
)
def compare(
    db: Database,
    paging: PagingParams,
    e: Annotated[list[str], Query(description="experiment ids or names, baseline first")],
    show: Annotated[CompareShow, Query(description="which rows to list")] = "all",
    metric: Annotated[str | None, Query(description="judge changes on this metric only")] = None,
) -> ComparePage:
    return queries.compare_page(
        db,
        experiments(e, db),
        show=show,
        metric=blank_is_none(metric),
        page=paging.page,
        per_page=paging.per_page,
    )
