"""Converting records to table rows and back.

A finished row is prepared as its plain fields (``row_fields``), pickled when they are
plain data so that whoever writes the batch (the SQLite writer process, on the other
core) encodes them, with the same code (``_row_text``); anything else is encoded at once.

Text columns hold any string: one that UTF-8 cannot carry (a lone surrogate, which an
honest JavaScript string reversal produces) is stored with ``\\udXXX`` escapes. JSON
columns keep values exactly (``_json``). A row whose encoding fails all the same is
stored as errored, with the reason, so one odd row never stops an experiment.
"""

from __future__ import annotations

import io
import pickle
import threading
import uuid
from datetime import datetime
from typing import Any

from assay._ids import stored_uuid
from assay.schemas import EvaluationResult, Example, Run, dotted_order_of, stored_result, trusted_builder
from assay.store import _row_text
from assay.store._json import dumps, loads, safe_repr
from assay.store.records import ExperimentRow


def text(value: Any) -> str | None:
    """A string SQLite takes (``_row_text.text``)."""
    return _row_text.text(value, safe_repr)


def ts(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def parse_ts(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def parse_required_ts(text: str) -> datetime:
    return datetime.fromisoformat(text)


def id_text(value: uuid.UUID) -> str:
    """``str(value)``, ~0.25 us sooner: its 16 bytes' hex, then the dashes (a row's two
    ids are made text as it is prepared)."""
    if type(value) is not uuid.UUID:  # a subclass may say otherwise
        return str(value)
    digits = value.int.to_bytes(16, "big").hex()
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def uid(text: str | None) -> uuid.UUID | None:
    return uuid.UUID(text) if text else None


_ENCODER = _row_text.RowEncoder(dumps, safe_repr)
RUN_COLUMNS = _row_text.RUN_COLUMNS
RESULT_COLUMNS = _row_text.RESULT_COLUMNS
score_kind = _row_text.score_kind


class _NotPlain(Exception):
    pass


class _PlainPickler(pickle.Pickler):
    """Pickles plain data only: the C pickler writes exact builtin scalars and
    containers itself (None, bool, int, float, str, bytes, bytearray, tuple, list,
    dict, set, frozenset) and consults ``reducer_override`` for anything else (a
    subclass, a NumPy value, a datetime, a user's object), which refuses all but
    complex numbers. So the writer process's ``pickle.loads`` gives back exactly the
    values this process would have encoded, and imports nothing."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is complex or obj is complex:  # pickled as a call of the type
            return NotImplemented
        raise _NotPlain


_pickling = threading.local()  # a pickler a row thread: made once, cleared after each row


def prepare(experiment_id: str, run_id: str, row: ExperimentRow) -> bytes | _row_text.Encoded:
    """A finished row for a store's batch: its fields pickled, when they are plain data
    (encoded later by ``encoded``, in this process or the SQLite writer process), else
    encoded now. Either is a snapshot of the row as it finished."""
    fields = row_fields(experiment_id, run_id, row)
    try:
        return _pickled(fields)
    except Exception:  # noqa: BLE001 - not plain data, or too deep: encoded here
        return _ENCODER.encode(fields)


def _pickled(fields: _row_text.RowFields) -> bytes:
    pickler = getattr(_pickling, "pickler", None)
    if pickler is None:
        _pickling.buffer = io.BytesIO()
        pickler = _pickling.pickler = _PlainPickler(_pickling.buffer, pickle.HIGHEST_PROTOCOL)
        # No memo: a row's values are small trees, pickled ~40% faster without noting
        # each object for references back to it (a value met twice is written twice; a
        # cycle is refused, so the row is encoded here, where JSON refuses it too).
        pickler.fast = True
    buffer: io.BytesIO = _pickling.buffer
    try:
        pickler.dump(fields)
        return buffer.getvalue()
    finally:
        buffer.seek(0)
        buffer.truncate()
        pickler.clear_memo()


encoded = _ENCODER.encoded  # what ``prepare`` gave, as rows of the runs and results tables


def run_id_of(prepared: bytes | _row_text.Encoded) -> str:
    """The run id of what ``prepare`` gave."""
    if isinstance(prepared, bytes):
        return str(pickle.loads(prepared)[1])
    return str(prepared[0][0])


def encode_row(experiment_id: str, run_id: str, row: ExperimentRow) -> _row_text.Encoded:
    """The run's row (its last column: whether the row failed, ``failed``) and its
    results' rows (``_row_text.RowEncoder.encode``)."""
    return _ENCODER.encode(row_fields(experiment_id, run_id, row))


def row_fields(experiment_id: str, run_id: str, row: ExperimentRow) -> _row_text.RowFields:
    """``_row_text.RowFields`` of ``row``."""
    fields = row.run.__dict__  # read once: attribute access on a pydantic model costs more
    child_runs, start, end = fields["child_runs"], fields["start_time"], fields["end_time"]
    start_at, end_at = _row_text.instant(start), _row_text.instant(end)
    return (
        experiment_id,
        run_id,
        id_text(row.example.id),
        row.repetition,
        row.position,
        fields["name"],
        fields["run_type"],
        fields["inputs"],
        fields["outputs"],
        fields["error"],
        start_at,
        end_at,
        _latency_ms(start, end, start_at, end_at),
        _children(child_runs) if child_runs else None,
        fields["extra"],
        [result_fields(result) for result in row.results],
    )


def _latency_ms(start: datetime, end: datetime | None, start_at: Any, end_at: Any) -> float | None:
    """``(end - start).total_seconds() * 1000.0``, from the microseconds ``instant`` gave
    when both are in UTC (the same divisions of the same integers, without a
    ``timedelta``)."""
    if end is None:
        return None
    if type(start_at) is int and type(end_at) is int:
        return (end_at - start_at) / 1_000_000 * 1000.0
    return (end - start).total_seconds() * 1000.0


def _children(child_runs: list[Run]) -> list[dict[str, Any]] | Exception:
    """The traced child runs as dicts; the error when one cannot be dumped, which makes
    the run's row an errored one saying why (``RowEncoder.run_row`` raises it)."""
    try:
        return [child.model_dump() for child in child_runs]
    except Exception as exc:  # noqa: BLE001 - a row must never stop the experiment
        return exc


def result_fields(result: EvaluationResult) -> tuple[Any, ...]:
    fields = result.__dict__
    return (
        fields["key"],
        fields["score"],
        fields["value"],
        fields["feedback"],
        fields["comment"],
        fields["correction"],
        fields["metadata"],
        fields["evaluator_info"],
        fields["error"],
    )


def result_row(
    experiment_id: str, run_id: str, result: EvaluationResult, pair: tuple[str, int, int]
) -> tuple[Any, ...]:
    """A results-table row of ``result``, with its run's (example id, repetition, position)."""
    return _ENCODER.result_row(experiment_id, run_id, result_fields(result), pair)


def score_column(result: EvaluationResult) -> float | None:
    return None if result.score is None else float(result.score)


def result_from(row: Any) -> EvaluationResult:
    columns = row.keys()
    score = row["score"]
    kind = row["score_kind"] if score is not None and "score_kind" in columns else None
    if kind == "bool":
        score = bool(score)
    elif kind == "int":
        score = int(score)
    return stored_result(
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
    """``dataset_id``: the row's, when the caller has it (a page of one dataset)."""
    fields = (row["id"], row["inputs"], row["outputs"], row["metadata"], row["created_at"], None)
    return example_of_fields(fields, uid(row["dataset_id"]) if dataset_id is None else dataset_id)


EXAMPLE_FIELDS = "e.id, e.inputs, e.outputs, e.metadata, e.created_at, e.position"
_new_example = trusted_builder(Example, ("id", "dataset_id", "inputs", "outputs", "metadata", "created_at"))


def example_of_fields(fields: tuple[Any, ...], dataset_id: uuid.UUID | None) -> Example:
    """An example from a row of ``EXAMPLE_FIELDS`` of the dataset ``dataset_id``. Built
    unvalidated (``trusted``): every field is decoded to its type here."""
    key, inputs, outputs, metadata, created_at, _ = fields
    outputs, metadata = loads(outputs), loads(metadata)
    return _new_example(
        stored_uuid(key),
        dataset_id,
        _object(loads(inputs)) or {},
        None if outputs is None else _object(outputs),
        None if metadata is None else _object(metadata),
        datetime.fromisoformat(created_at),
    )


def _object(value: Any) -> dict[str, Any]:
    """A stored JSON object, checked as validation would: the store only writes objects
    there, so anything else is a damaged row."""
    if type(value) is not dict:
        raise ValueError(f"an example's stored field is not a JSON object: {safe_repr(value)[:80]}")
    return value
