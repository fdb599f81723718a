"""The feedback-keys page of an experiment or a dataset, and its write (a CSRF-checked
form POST; ``--read-only`` serves the page without its forms and no write at all)."""

from __future__ import annotations

import uuid
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from assay.store.read.annotation import stored_metadata
from assay.store.read.database import ReadOnlyDatabase
from assay.ui.annotate.attach import readable_keys
from assay.ui.annotate.key_edits import edited_keys
from assay.ui.annotate.keys import DEFAULT_KEYS, parse_keys
from assay.ui.annotate.routes import render
from assay.ui.csrf import csrf_token
from assay.ui.errors import BadRequest
from assay.ui.forms import checked_form
from assay.ui.lookup import Database, DatasetParam, ExperimentParam
from assay.ui.queries._sql import loads

__all__ = ["pages", "writes"]

pages = APIRouter(include_in_schema=False, default_response_class=HTMLResponse)
writes = APIRouter(include_in_schema=False)  # served unless --read-only

Level = Literal["experiments", "datasets"]


@pages.get("/experiments/{ref}/feedback-keys")
def experiment_keys(request: Request, experiment: ExperimentParam, db: Database) -> Response:
    effective, problem = readable_keys(db, experiment)
    return _page(request, db, "experiments", experiment.id, experiment.name, effective, problem)


@pages.get("/datasets/{ref}/feedback-keys")
def dataset_keys(request: Request, dataset: DatasetParam, db: Database) -> Response:
    raw = _defined(db, "datasets", dataset.id)
    try:
        effective = parse_keys(raw, f"dataset {dataset.name!r} metadata") if raw else DEFAULT_KEYS
        problem = None
    except BadRequest as exc:
        effective, problem = (), str(exc)
    return _page(request, db, "datasets", dataset.id, dataset.name, effective, problem)


@writes.post("/experiments/{ref}/feedback-keys")
async def edit_experiment_keys(request: Request, experiment: ExperimentParam, db: Database) -> Response:
    return await _edit(request, db, "experiments", experiment.id, f"experiment {experiment.name!r}")


@writes.post("/datasets/{ref}/feedback-keys")
async def edit_dataset_keys(request: Request, dataset: DatasetParam, db: Database) -> Response:
    return await _edit(request, db, "datasets", dataset.id, f"dataset {dataset.name!r}")


async def _edit(request: Request, db: ReadOnlyDatabase, level: Level, record_id: str, what: str) -> Response:
    form = await checked_form(request)

    def edit(stored: Any) -> list[dict[str, Any]] | None:  # run with the record locked
        return edited_keys(_entries(stored), form, f"{what} metadata")

    await run_in_threadpool(db.store.edit_metadata_field, level, uuid.UUID(record_id), "feedback_keys", edit)
    return RedirectResponse(f"/{level}/{record_id}/feedback-keys?done={form.get('action', '')}", 303)


def _defined(db: ReadOnlyDatabase, level: Level, record_id: str) -> list[dict[str, Any]]:
    """This level's own definitions as stored (a non-list is shown as none, and replaced)."""
    metadata = loads(stored_metadata(db, level, record_id))
    return _entries(metadata.get("feedback_keys") if isinstance(metadata, dict) else None)


def _entries(raw: Any) -> list[dict[str, Any]]:
    return [entry for entry in raw if isinstance(entry, dict)] if isinstance(raw, list) else []


def _page(
    request: Request,
    db: ReadOnlyDatabase,
    level: Level,
    record_id: str,
    name: str,
    effective: Any,
    problem: str | None,
) -> Response:
    return render(
        request,
        "feedback_keys.html",
        level=level,
        record_id=record_id,
        name=name,
        defined=_defined(db, level, record_id),
        effective=effective,
        problem=problem,
        csrf=csrf_token(request),
        writable=not request.app.state.read_only,
        done=request.query_params.get("done"),
        nav=level,
    )
