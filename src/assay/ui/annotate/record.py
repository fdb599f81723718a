"""A person's labels on a row, from a submitted form to feedback records in the store.

The records are those of ``Client.create_feedback``: one per scored key, plus one
``note`` for a comment or a corrected output, each with source type ``human``, the
annotator's name and the time. Each save adds records (the latest counts), so two
annotators saving at once never overwrite each other.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from assay.schemas import Feedback
from assay.store.base import Store
from assay.ui.annotate.human import HUMAN, NOTE_KEY, SKIP_KEY
from assay.ui.annotate.keys import FeedbackKey
from assay.ui.errors import BadRequest

__all__ = ["MAX_COMMENT", "Submission", "check_annotator", "parse_submission", "store_submission"]

MAX_COMMENT = 10_000
MAX_CORRECTION = 200_000
MAX_NAME = 64


@dataclass(frozen=True)
class Submission:
    annotator: str
    choices: dict[str, tuple[float | int | None, Any]]  # key -> (score, value)
    comment: str | None = None
    correction: Any = None
    skipped: bool = False


def check_annotator(raw: str | None) -> str:
    name = (raw or "").strip()
    if not name or len(name) > MAX_NAME or any(not ch.isprintable() for ch in name):
        raise BadRequest(
            f"parameter 'annotator': your name, 1 to {MAX_NAME} printable characters, is required "
            "so that your labels are told apart from others'"
        )
    return name


def parse_submission(
    form: Mapping[str, str], keys: Sequence[FeedbackKey], original_outputs: Any, shown: str | None = None
) -> Submission:
    """The form's fields (``key.<name>``, ``comment``, ``correction``, ``skip``), checked.
    A correction box left as it was ``shown`` (the outputs, or the annotator's last
    correction) records nothing."""
    annotator = check_annotator(form.get("annotator"))
    if form.get("skip") == "1":  # a skip saves nothing else, whatever the form held
        return Submission(annotator, {}, skipped=True)
    choices = {}
    for key in keys:
        given = form.get(f"key.{key.key}", "")
        if given:
            choice = key.choice(given)
            choices[key.key] = (choice.score, choice.value)
    comment = form.get("comment", "").strip() or None
    if comment is not None and len(comment) > MAX_COMMENT:
        raise BadRequest(f"parameter 'comment' is longer than {MAX_COMMENT} characters")
    box = form.get("correction")
    correction = None if box is None else _correction(box, original_outputs, shown)
    if not (choices or comment or correction is not None):
        raise BadRequest("nothing to save: pick a score or label, or write a comment or a correction")
    return Submission(annotator, choices, comment, correction)


def correction_text(outputs: Any) -> str:
    """What the correction box starts with: a one-text output as its text, else JSON."""
    if isinstance(outputs, dict) and len(outputs) == 1:
        only = next(iter(outputs.values()))
        if isinstance(only, str):
            return only
    if outputs is None:
        return ""
    return orjson.dumps(outputs, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()


def _correction(text: str, outputs: Any, shown: str | None) -> Any:
    """The corrected outputs, in the outputs' shape; None when unchanged."""
    text = text.replace("\r\n", "\n")
    if len(text) > MAX_CORRECTION:
        raise BadRequest(f"parameter 'correction' is longer than {MAX_CORRECTION} characters")
    if text.strip() in (correction_text(outputs).strip(), (shown or "").replace("\r\n", "\n").strip()):
        return None
    if isinstance(outputs, dict) and len(outputs) == 1 and isinstance(next(iter(outputs.values())), str):
        return {next(iter(outputs)): text}
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(
            f"parameter 'correction': these outputs are JSON, and the correction is not ({exc}); "
            "fix the JSON or leave the box as it was"
        ) from None


def store_submission(store: Store, submission: Submission, experiment_id: str, run_id: str) -> int:
    """Add the submission's records through the store's API; how many were added."""
    records = [
        _record(submission, experiment_id, run_id, key, score=score, value=value)
        for key, (score, value) in submission.choices.items()
    ]
    if submission.comment is not None or submission.correction is not None:
        records.append(
            _record(
                submission,
                experiment_id,
                run_id,
                NOTE_KEY,
                comment=submission.comment,
                correction=submission.correction,
            )
        )
    if submission.skipped:
        records.append(_record(submission, experiment_id, run_id, SKIP_KEY))
    for record in records:
        store.add_feedback(record)
    return len(records)


def _record(submission: Submission, experiment_id: str, run_id: str, key: str, **fields: Any) -> Feedback:
    run = uuid.UUID(run_id)
    return Feedback(
        run_id=run,
        trace_id=run,
        session_id=uuid.UUID(experiment_id),
        key=key,
        feedback_source={"type": HUMAN, "metadata": {"annotator": submission.annotator}},
        **fields,
    )
