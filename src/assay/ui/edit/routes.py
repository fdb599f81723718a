"""The dataset writes: add, edit, delete an example; add an experiment's row; upload.

Each answers with a redirect to the dataset's page at its new version, whose
address names it, so the person sees what changed.
"""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from assay.schemas import Example
from assay.store.read.database import ReadOnlyDatabase
from assay.ui.annotate.human import latest_labels
from assay.ui.annotate.routes import render
from assay.ui.csrf import csrf_token
from assay.ui.edit.fields import as_text, json_object
from assay.ui.edit.upload import parse_upload
from assay.ui.errors import BadRequest, NotFound
from assay.ui.forms import checked_form
from assay.ui.lookup import Database, DatasetParam, ExperimentParam
from assay.ui.models import DatasetSummary
from assay.ui.queries import find_dataset, row_detail
from assay.ui.reading.files import listed_files

__all__ = ["pages", "writes"]

pages = APIRouter(include_in_schema=False, default_response_class=HTMLResponse)
writes = APIRouter(include_in_schema=False)  # served unless --read-only


@pages.get("/datasets/{ref}/examples/{example_id}/edit")
def edit_page(request: Request, dataset: DatasetParam, example_id: str, db: Database) -> Response:
    example = _example(db, dataset, example_id)
    fields = {name: as_text(getattr(example, name)) for name in ("inputs", "outputs", "metadata")}
    return render(
        request,
        "example_edit.html",
        d=dataset,
        example=example,
        fields=fields,
        files=listed_files(db, dataset.id, example_id, None),
        csrf=csrf_token(request),
        writable=not request.app.state.read_only,
        nav="datasets",
    )


@writes.post("/datasets/{ref}/examples")
async def add_example(request: Request, dataset: DatasetParam, db: Database) -> Response:
    form = await checked_form(request)
    example = Example(
        dataset_id=uuid.UUID(dataset.id),
        inputs=json_object(form, "inputs", required=True) or {},
        outputs=json_object(form, "outputs"),
        metadata=json_object(form, "metadata") or {},
    )
    await run_in_threadpool(db.store.add_examples, uuid.UUID(dataset.id), [example])
    return _to_dataset(db, dataset.id, "added an example")


@writes.post("/datasets/{ref}/examples/{example_id}")
async def edit_example(request: Request, dataset: DatasetParam, example_id: str, db: Database) -> Response:
    form = await checked_form(request)
    example = _example(db, dataset, example_id)
    changed = example.model_copy(
        update={
            "inputs": json_object(form, "inputs", required=True) or {},
            "outputs": json_object(form, "outputs"),
            "metadata": json_object(form, "metadata") or {},
        }
    )
    await run_in_threadpool(db.store.update_example, changed)
    return _to_dataset(db, dataset.id, "edited an example")


@writes.post("/datasets/{ref}/examples/{example_id}/delete")
async def delete_example(request: Request, dataset: DatasetParam, example_id: str, db: Database) -> Response:
    await checked_form(request)
    example = _example(db, dataset, example_id)
    await run_in_threadpool(db.store.delete_example, example.id)
    return _to_dataset(db, dataset.id, "deleted an example")


@writes.post("/datasets/{ref}/upload")
async def upload(request: Request, dataset: DatasetParam, db: Database) -> Response:
    form = await checked_form(request)
    examples = parse_upload(
        form.get("content", ""), form.get("format", "jsonl"), form.get("filename", ""), uuid.UUID(dataset.id)
    )
    await run_in_threadpool(db.store.add_examples, uuid.UUID(dataset.id), examples)
    return _to_dataset(db, dataset.id, f"uploaded {len(examples)} examples")


@writes.post("/experiments/{ref}/rows/{run_id}/to-dataset")
async def row_to_dataset(
    request: Request, experiment: ExperimentParam, run_id: str, db: Database
) -> Response:
    """The row's inputs as a new example; its reference is the latest correction people
    made on the row, else the row's outputs (``reference=outputs``)."""
    form = await checked_form(request)
    target = find_dataset(db, form.get("dataset", ""))
    if target is None:
        raise BadRequest(f"parameter 'dataset': no dataset with id or name {form.get('dataset', '')!r}")
    row = row_detail(db, experiment, run_id)
    reference = _latest_correction(db, experiment.id, run_id)
    outputs = reference if reference is not None else row.outputs
    example = Example(
        dataset_id=uuid.UUID(target.id),
        inputs=row.inputs if isinstance(row.inputs, dict) else {"input": row.inputs},
        outputs=outputs if isinstance(outputs, dict) or outputs is None else {"output": outputs},
        metadata={
            "from_experiment": experiment.name,
            "from_run": run_id,
            "reference": "corrected" if reference is not None else "outputs",
        },
        source_run_id=uuid.UUID(run_id),
    )
    await run_in_threadpool(db.store.add_examples, uuid.UUID(target.id), [example])
    return _to_dataset(db, target.id, "added the row")


def _latest_correction(db: ReadOnlyDatabase, experiment_id: str, run_id: str) -> Any:
    notes = [x for x in latest_labels(db, [experiment_id], [run_id]) if x.correction is not None]
    return max(notes, key=lambda x: x.created_at).correction if notes else None


def _example(db: ReadOnlyDatabase, dataset: DatasetSummary, example_id: str) -> Example:
    try:
        found = db.store.get_example(uuid.UUID(example_id))
    except ValueError:
        found = None
    if found is None or str(found.dataset_id) != dataset.id:
        raise NotFound(f"dataset {dataset.name!r} has no current example with id {example_id!r}")
    return found


def _to_dataset(db: ReadOnlyDatabase, dataset_id: str, done: str) -> Response:
    fresh = find_dataset(db, dataset_id)
    version = fresh.version if fresh else ""
    return RedirectResponse(f"/datasets/{dataset_id}?version={version}&done={done.replace(' ', '+')}", 303)
