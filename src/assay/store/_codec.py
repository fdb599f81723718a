"""Converting records to table rows and back.

Text columns hold any string: one that UTF-8 cannot carry (a lone surrogate, which an
honest JavaScript string reversal produces) is stored with ``\\udXXX`` escapes. JSON
columns keep values exactly (``_json``). A row whose encoding fails all the same is
stored as errored, with the reason, so one odd row never stops an experiment.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from assay.schemas import EvaluationResult, Example, Run, dotted_order_of, trusted
from assay.store._json import dumps, loads, safe_repr
from assay.store.records import ExperimentRow


def text(value: str | None) -> str | None:
    """A string SQLite takes: lone surrogates (which UTF-8 cannot carry) as ``\\udXXX``
    escapes; everything else, NUL included, exactly as it is."""
    if type(value) is str and value.isascii():  # the common case, first
        return value
    if value is None:
        return None
    if type(value) is not str:
        value = safe_repr(value)
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            value = value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def ts(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def parse_ts(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def parse_required_ts(text: str) -> datetime:
    return datetime.fromisoformat(text)


def uid(text: str | None) -> uuid.UUID | None:
    return uuid.UUID(text) if text else None


def score_column(result: EvaluationResult) -> float | None:
    return None if result.score is None else float(result.score)


def encode_row(experiment_id: str, run_id: str, row: ExperimentRow) -> tuple[Any, list[Any]]:
    """The run's row (its last column: whether the row failed, ``failed_row``) and its
    results' rows. A part that cannot be encoded is replaced by an errored row saying
    why; the others are stored as they are."""
    pair = (str(row.example.id), row.repetition, row.position)  # the id's text once: str(UUID) costs ~1.5 us
    results = []
    failed = row.run.error is not None
    for result in row.results:
        fields = result.__dict__
        score = fields["score"]
        if not failed and (fields["error"] is not None or (score is not None and score < 1)):
            failed = True
        try:
            results.append(result_row(experiment_id, run_id, result, pair))
        except Exception as exc:  # noqa: BLE001 - a row must never stop the experiment
            results.append(
                (
                    experiment_id,
                    run_id,
                    text(str(result.key)),
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    _reason(exc),
                    None,
                    *pair,
                )
            )
    try:
        run = run_row(experiment_id, run_id, row.run, pair[0], row.repetition, row.position)
    except Exception as exc:  # noqa: BLE001
        run = _errored_run_row(experiment_id, run_id, row, _reason(exc))
    return (*run, int(failed)), results


def _reason(exc: BaseException) -> str:
    return text(f"this row could not be stored: {type(exc).__name__}: {safe_repr(exc)}") or ""


def _errored_run_row(experiment_id: str, run_id: str, row: ExperimentRow, reason: str) -> tuple[Any, ...]:
    run = row.run
    return (
        run_id,
        experiment_id,
        str(row.example.id),
        row.repetition,
        row.position,
        text(str(run.name)),
        text(str(run.run_type)),
        None,
        None,
        reason,
        ts(run.start_time),
        ts(run.end_time),
        None,
        None,
        None,
    )


def run_row(
    experiment_id: str, run_id: str, run: Run, example_id: str, repetition: int, position: int
) -> tuple[Any, ...]:
    # Python-mode dumps: whatever a traced call saw is encoded by ``dumps``, which never fails.
    fields = run.__dict__  # read once: attribute access on a pydantic model costs more
    child_runs, extra = fields["child_runs"], fields["extra"]
    children = [child.model_dump() for child in child_runs] if child_runs else None
    start, end = fields["start_time"], fields["end_time"]
    return (
        run_id,
        experiment_id,
        example_id,
        repetition,
        position,
        text(fields["name"]),
        text(fields["run_type"]),
        dumps(fields["inputs"]),
        dumps(fields["outputs"]),
        None if fields["error"] is None else text(fields["error"]),
        start.isoformat(),
        None if end is None else end.isoformat(),
        None if end is None else (end - start).total_seconds() * 1000.0,
        None if children is None else dumps(children),
        dumps(extra) if extra else None,
    )


RUN_COLUMNS = (
    "id, experiment_id, example_id, repetition, position, name, run_type, inputs, outputs, "
    "error, start_time, end_time, latency_ms, child_runs, extra"
)


def result_row(
    experiment_id: str, run_id: str, result: EvaluationResult, pair: tuple[str, int, int]
) -> tuple[Any, ...]:
    """``pair`` is the run's (example id, repetition, position): a copy on each result, so
    that a comparison pairs two experiments' scores, and a sorted page reads a metric's
    rows in order, from one index without visiting the runs."""
    fields = result.__dict__  # read once: attribute access on a pydantic model costs more
    score, value, correction = fields["score"], fields["value"], fields["correction"]
    metadata, info = fields["metadata"], fields["evaluator_info"]
    feedback, comment, error = fields["feedback"], fields["comment"], fields["error"]
    return (  # most fields are None: checked inline, a call each costs more than the test
        experiment_id,
        run_id,
        text(fields["key"]),
        None if score is None else float(score),
        None if value is None else dumps(value),
        None if feedback is None else text(feedback),
        None if comment is None else text(comment),
        None if correction is None else dumps(correction),
        dumps(metadata) if metadata else None,
        dumps(info) if info else None,
        None if error is None else text(error),
        score_kind(score),
        *pair,
    )


def score_kind(score: Any) -> str | None:
    """What the REAL score column cannot say by itself: the score was a bool, or an int."""
    kind = type(score)
    if kind is bool:
        return "bool"
    if kind is float or score is None:
        return None
    if isinstance(score, bool):
        return "bool"
    if isinstance(score, int) and abs(score) <= 2**53:  # exact as a float, so exact back
        return "int"
    return None


RESULT_COLUMNS = (
    "experiment_id, run_id, key, score, value, feedback, comment, correction, metadata, "
    "evaluator_info, error, score_kind, example_id, repetition, position"
)


def result_from(row: Any) -> EvaluationResult:
    columns = row.keys()
    score = row["score"]
    kind = row["score_kind"] if score is not None and "score_kind" in columns else None
    if kind == "bool":
        score = bool(score)
    elif kind == "int":
        score = int(score)
    return EvaluationResult(
        key=row["key"],
        score=score,
        value=loads(row["value"]),
        feedback=row["feedback"],
        comment=row["comment"],
        correction=loads(row["correction"]) if "correction" in columns else None,
        metadata=loads(row["metadata"]) or {},
        evaluator_info=loads(row["evaluator_info"]) or {} if "evaluator_info" in columns else {},
        error=row["error"],
        source_run_id=uid(row["run_id"]) if "run_id" in columns else None,
    )


def run_from(row: Any) -> Run:
    children = loads(row["child_runs"]) or []
    extra = loads(row["extra"]) or {}
    start = parse_required_ts(row["start_time"])
    return Run(
        id=uuid.UUID(row["id"]),
        name=row["name"],
        run_type=row["run_type"],
        inputs=loads(row["inputs"]) or {},
        outputs=loads(row["outputs"]),
        error=row["error"],
        start_time=start,
        end_time=parse_ts(row["end_time"]),
        child_runs=[Run.model_validate(child) for child in children],
        extra=extra,
        reference_example_id=uuid.UUID(row["example_id"]),
        tags=list(extra["tags"]) if extra.get("tags") else None,
        trace_id=uuid.UUID(row["id"]),  # a root run starts its trace
        session_id=uuid.UUID(row["experiment_id"]),  # LangSmith's project: the experiment
        dotted_order=dotted_order_of(start, row["id"], None),
    )


def example_from(row: Any, dataset_id: uuid.UUID | None = None) -> Example:
    """``dataset_id``: the row's, when the caller has it (a page of one dataset). Built
    unvalidated (``trusted``): every field is decoded to its type here."""
    outputs, metadata = loads(row["outputs"]), loads(row["metadata"])
    return trusted(
        Example,
        {
            "id": uuid.UUID(row["id"]),
            "dataset_id": uuid.UUID(row["dataset_id"]) if dataset_id is None else dataset_id,
            "inputs": _object(loads(row["inputs"])) or {},
            "outputs": None if outputs is None else _object(outputs),
            "metadata": None if metadata is None else _object(metadata),
            "created_at": parse_required_ts(row["created_at"]),
        },
    )


def _object(value: Any) -> dict[str, Any]:
    """A stored JSON object, checked as validation would: the store only writes objects
    there, so anything else is a damaged row."""
    if type(value) is not dict:
        raise ValueError(f"an example's stored field is not a JSON object: {safe_repr(value)[:80]}")
    return value
