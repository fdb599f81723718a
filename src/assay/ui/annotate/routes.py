"""The UI's writes (people's feedback on a row) and the annotation queue's page.

Every write is a POST from a page of this UI (the guard checks its origin) carrying
the page's CSRF token; ``--read-only`` refuses them all before they reach here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote, unquote

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from assay.store.read import runs as stored_runs
from assay.store.read.database import ReadOnlyDatabase
from assay.ui.annotate.agreement import agreements
from assay.ui.annotate.attach import feedback_keys, readable_keys
from assay.ui.annotate.human import Label, latest_labels
from assay.ui.annotate.keys import FeedbackKey
from assay.ui.annotate.queue import RULES, QueueSpec, kept_queue_runs
from assay.ui.annotate.record import check_annotator, correction_text, parse_submission, store_submission
from assay.ui.annotate.summary import human_metrics
from assay.ui.csrf import csrf_token
from assay.ui.errors import BadRequest
from assay.ui.forms import Forbidden, checked_form, local_target
from assay.ui.lookup import Database, ExperimentParam, experiments
from assay.ui.queries import list_experiments, row_detail

__all__ = ["ANNOTATOR_COOKIE", "Forbidden", "annotator_of_request", "form_context", "router", "writes"]

router = APIRouter(include_in_schema=False, default_response_class=HTMLResponse)
writes = APIRouter(include_in_schema=False)  # served unless --read-only
ANNOTATOR_COOKIE = "assay_ui_annotator"


def annotator_of_request(request: Request) -> str:
    return unquote(request.cookies.get(ANNOTATOR_COOKIE, ""))


@dataclass(frozen=True)
class FormContext:
    """What a row's feedback form needs: its keys, this annotator's latest labels."""

    writable: bool
    keys: tuple[FeedbackKey, ...]
    mine: dict[str, Label]
    annotator: str
    csrf: str
    correction: str
    problem: str | None = None


def form_context(request: Request, db: ReadOnlyDatabase, row: Any, annotator: str) -> FormContext:
    keys, problem = readable_keys(db, row.experiment)
    mine = [x for x in latest_labels(db, [row.experiment.id], [row.run_id]) if x.annotator == annotator]
    return FormContext(
        writable=not request.app.state.read_only,
        keys=keys,
        mine={x.key: x for x in mine},
        annotator=annotator,
        csrf=csrf_token(request),
        correction=_latest_correction(mine, row.outputs),
        problem=problem,
    )


def _latest_correction(mine: list[Label], outputs: Any) -> str:
    notes = [x for x in mine if x.correction is not None]
    return correction_text(notes[-1].correction if notes else outputs)


@writes.post("/experiments/{ref}/rows/{run_id}/feedback")
async def save_feedback(request: Request, experiment: ExperimentParam, run_id: str, db: Database) -> Response:
    form = await checked_form(request)
    row = row_detail(db, experiment, run_id)  # 404 for a row that is not this experiment's
    keys = feedback_keys(db, experiment)
    annotator = check_annotator(form.get("annotator"))
    mine = [x for x in latest_labels(db, [experiment.id], [row.run_id]) if x.annotator == annotator]
    submission = parse_submission(form, keys, row.outputs, _latest_correction(mine, row.outputs))
    await run_in_threadpool(store_submission, db.store, submission, experiment.id, row.run_id)
    target = local_target(form.get("next")) or f"/experiments/{experiment.id}/rows/{row.run_id}"
    response = RedirectResponse(target, status_code=303)
    cookie = quote(submission.annotator)
    response.set_cookie(ANNOTATOR_COOKIE, cookie, httponly=True, samesite="strict", path="/")
    return response


@router.get("/queue")
def queue_page(
    request: Request,
    db: Database,
    e: Annotated[list[str], Query()] = [],  # noqa: B006 - FastAPI copies defaults
    rule: str = "all",
    n: int | None = None,
    seed: int = 0,
    annotator: str | None = None,
    at: int | None = None,
) -> Response:
    refs = [ref for ref in e if ref.strip()]
    name = (annotator or "").strip() or annotator_of_request(request)
    if not refs or not (annotator or "").strip():
        listing = list_experiments(db, page=1, per_page=200)
        return render(
            request,
            "queue_start.html",
            listing=listing,
            rules=RULES,
            annotator=name,
            chosen=refs,
            rule=rule,
            n=n,
            seed=seed,
            nav="queue",
        )
    chosen = experiments(refs, db)
    spec = QueueSpec(tuple(x.id for x in chosen), rule=rule, n=n, seed=seed)
    runs = kept_queue_runs(db, spec)
    labels = latest_labels(db, spec.experiment_ids, None)
    done = {x.run_id for x in labels if x.annotator == name}
    queued = set(runs)
    position = _position(runs, done, at)
    keys = feedback_keys(db, chosen[0])
    context: dict[str, Any] = {
        "spec": spec,
        "refs": refs,
        "runs": runs,
        "done": sum(1 for r in runs if r in done),
        "position": position,
        "annotator": name,
        "rules": RULES,
        "nav": "queue",
        "metrics": human_metrics([x for x in labels if x.run_id in queued], keys),
        "agreement": agreements([x for x in labels if x.run_id in queued], [k.key for k in keys]),
    }
    if position is not None:
        run_id = runs[position]
        owner = next(x for x in chosen if _holds(db, x.id, run_id))
        row = row_detail(db, owner, run_id)
        context.update(row=row, form=form_context(request, db, row, name))
    return render(request, "queue.html", **context)


def render(request: Request, template: str, **context: Any) -> Response:
    response: Response = request.app.state.templates.TemplateResponse(request, template, context)
    return response


def _position(runs: list[str], done: set[str], at: int | None) -> int | None:
    """The asked position, else the first row not yet done (None: the queue is finished)."""
    if at is not None:
        if not 0 <= at < len(runs):
            raise BadRequest(f"parameter 'at' must be between 0 and {len(runs) - 1}; got {at}")
        return at
    return next((i for i, run_id in enumerate(runs) if run_id not in done), None)


def _holds(db: ReadOnlyDatabase, experiment_id: str, run_id: str) -> bool:
    return stored_runs.holds(db, experiment_id, run_id)
