"""The UI's writes (people's feedback on a row) and the annotation queue's page.

Every write is a POST from a page of this UI (the guard checks its origin) carrying
the page's CSRF token; ``--read-only`` refuses them all before they reach here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import parse_qsl, quote, unquote

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from assay.ui.annotate.agreement import agreements
from assay.ui.annotate.attach import feedback_keys, readable_keys
from assay.ui.annotate.human import Label, latest_labels
from assay.ui.annotate.keys import FeedbackKey
from assay.ui.annotate.queue import RULES, QueueSpec, queue_runs
from assay.ui.annotate.record import check_annotator, correction_text, parse_submission, store_submission
from assay.ui.annotate.summary import human_metrics
from assay.ui.csrf import CSRF_COOKIE, CSRF_FIELD, CSRF_HEADER, CsrfKeys, session_of
from assay.ui.db import ReadOnlyDatabase
from assay.ui.errors import BadRequest
from assay.ui.lookup import Database, ExperimentParam, experiments
from assay.ui.queries import list_experiments, row_detail

__all__ = ["ANNOTATOR_COOKIE", "Forbidden", "annotator_of_request", "form_context", "router", "writes"]

router = APIRouter(include_in_schema=False, default_response_class=HTMLResponse)
writes = APIRouter(include_in_schema=False)  # served unless --read-only
ANNOTATOR_COOKIE = "assay_ui_annotator"
MAX_FORM_BYTES = 512 * 1024


def annotator_of_request(request: Request) -> str:
    return unquote(request.cookies.get(ANNOTATOR_COOKIE, ""))


def csrf_token(request: Request) -> str:
    """The token this browser's pages carry in their forms."""
    keys: CsrfKeys = request.app.state.csrf
    session = session_of(request)
    return keys.token(session) if session else ""


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
    form = await _form(request)
    _check_csrf(request, form)
    row = row_detail(db, experiment, run_id)  # 404 for a row that is not this experiment's
    keys = feedback_keys(db, experiment)
    annotator = check_annotator(form.get("annotator"))
    mine = [x for x in latest_labels(db, [experiment.id], [row.run_id]) if x.annotator == annotator]
    submission = parse_submission(form, keys, row.outputs, _latest_correction(mine, row.outputs))
    await run_in_threadpool(store_submission, db.store, submission, experiment.id, row.run_id)
    target = _local(form.get("next")) or f"/experiments/{experiment.id}/rows/{row.run_id}"
    response = RedirectResponse(target, status_code=303)
    cookie = quote(submission.annotator)
    response.set_cookie(ANNOTATOR_COOKIE, cookie, httponly=True, samesite="strict", path="/")
    return response


async def _form(request: Request) -> dict[str, str]:
    """A urlencoded form, bounded in size; repeated fields keep their first value."""
    if not request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        raise BadRequest("a write must be a form (application/x-www-form-urlencoded)")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise BadRequest(f"the form is larger than {MAX_FORM_BYTES // 1024} KiB")
    form: dict[str, str] = {}
    for name, value in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=200):
        form.setdefault(name, value)
    return form


def _check_csrf(request: Request, form: dict[str, str]) -> None:
    keys: CsrfKeys = request.app.state.csrf
    given = form.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER)
    if not keys.valid(request.cookies.get(CSRF_COOKIE), given):
        raise Forbidden(
            "refused: this form's token does not match your browser session (the page is from "
            "before a restart of the server, or from another site); reload the page and try again"
        )


class Forbidden(PermissionError):
    """A write without a valid CSRF token: answered 403."""


def _local(target: str | None) -> str | None:
    """A redirect target on this server only (a path, never another host)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return None
    return target


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
    runs = queue_runs(db, spec)
    labels = latest_labels(db, spec.experiment_ids, None)
    done = {x.run_id for x in labels if x.annotator == name}
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
        "metrics": human_metrics([x for x in labels if x.run_id in set(runs)], keys),
        "agreement": agreements([x for x in labels if x.run_id in set(runs)], [k.key for k in keys]),
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
    return (
        db.query_one("SELECT 1 FROM runs WHERE id = ? AND experiment_id = ?", (run_id, experiment_id))
        is not None
    )
