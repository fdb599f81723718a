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

from assay.schemas import EvaluationResult, Example, Run, dotted_order_of
from assay.store._json import dumps, loads, safe_repr
from assay.store.records import ExperimentRow


def text(value: str | None) -> str | None:
    """A string SQLite takes: lone surrogates (which UTF-8 cannot carry) as ``\\udXXX``
    escapes; everything else, NUL included, exactly as it is."""
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
    """The run's row and its results' rows. A part that cannot be encoded is replaced by
    an errored row saying why; the others are stored as they are."""
    try:
        run = run_row(experiment_id, run_id, row.run, row.example, row.repetition, row.position)
    except Exception as exc:  # noqa: BLE001 - a row must never stop the experiment
        run = _errored_run_row(experiment_id, run_id, row, _reason(exc))
    results = []
    pair = (str(row.example.id), row.repetition)
    for result in row.results:
        try:
            results.append(result_row(experiment_id, run_id, result, pair))
        except Exception as exc:  # noqa: BLE001
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
    return run, results


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
    experiment_id: str, run_id: str, run: Run, example: Example, repetition: int, position: int
) -> tuple[Any, ...]:
    # Python-mode dumps: whatever a traced call saw is encoded by ``dumps``, which never fails.
    children = [child.model_dump() for child in run.child_runs] if run.child_runs else None
    return (
        run_id,
        experiment_id,
        str(example.id),
        repetition,
        position,
        text(run.name),
        text(run.run_type),
        dumps(run.inputs),
        dumps(run.outputs),
        text(run.error),
        ts(run.start_time),
        ts(run.end_time),
        run.latency_ms,
        dumps(children),
        dumps(run.extra or None),
    )


RUN_COLUMNS = (
    "id, experiment_id, example_id, repetition, position, name, run_type, inputs, outputs, "
    "error, start_time, end_time, latency_ms, child_runs, extra"
)


def result_row(
    experiment_id: str, run_id: str, result: EvaluationResult, pair: tuple[str, int]
) -> tuple[Any, ...]:
    """``pair`` is the run's (example id, repetition): a copy on each result, so that a
    comparison pairs two experiments' scores from one index without visiting the runs."""
    return (
        experiment_id,
        run_id,
        text(result.key),
        score_column(result),
        dumps(result.value),
        text(result.feedback),
        text(result.comment),
        dumps(result.correction),
        dumps(result.metadata or None),
        dumps(result.evaluator_info or None),
        text(result.error),
        score_kind(result.score),
        *pair,
    )


def score_kind(score: Any) -> str | None:
    """What the REAL score column cannot say by itself: the score was a bool, or an int."""
    if isinstance(score, bool):
        return "bool"
    if isinstance(score, int) and abs(score) <= 2**53:  # exact as a float, so exact back
        return "int"
    return None


RESULT_COLUMNS = (
    "experiment_id, run_id, key, score, value, feedback, comment, correction, metadata, "
    "evaluator_info, error, score_kind, example_id, repetition"
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


def example_from(row: Any) -> Example:
    return Example(
        id=uuid.UUID(row["id"]),
        dataset_id=uuid.UUID(row["dataset_id"]),
        inputs=loads(row["inputs"]) or {},
        outputs=loads(row["outputs"]),
        metadata=loads(row["metadata"]),
        created_at=parse_required_ts(row["created_at"]),
    )
