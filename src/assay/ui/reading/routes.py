"""Pages for reading outputs against each other: two runs' outputs side by side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from assay.store.read import runs
from assay.store.read.database import ReadOnlyDatabase
from assay.ui.annotate.routes import render
from assay.ui.errors import NotFound
from assay.ui.lookup import Database
from assay.ui.queries._sql import loads
from assay.ui.reading.diff import as_diff_text, side_by_side

__all__ = ["router"]

router = APIRouter(include_in_schema=False, default_response_class=HTMLResponse)


@dataclass(frozen=True)
class RunText:
    run_id: str
    experiment_id: str
    experiment_name: str
    inputs: Any
    outputs: Any


@router.get("/diff")
def diff_page(request: Request, a: str, b: str, db: Database) -> Response:
    left, right = _run(db, a, "a"), _run(db, b, "b")
    d = side_by_side(as_diff_text(left.outputs), as_diff_text(right.outputs))
    return render(request, "diff.html", a=left, b=right, d=d, nav="compare")


def _run(db: ReadOnlyDatabase, run_id: str, name: str) -> RunText:
    found = runs.run_text(db, run_id)
    if found is None:
        raise NotFound(f"parameter {name!r}: no stored row with run id {run_id!r}")
    return RunText(
        found.id, found.experiment_id, found.experiment_name, loads(found.inputs), loads(found.outputs)
    )
