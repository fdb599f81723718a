"""One stored run read whole: its text for a side-by-side reading, the traceback its
runner kept, and whether an experiment holds it."""

from __future__ import annotations

from dataclasses import dataclass

from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.sql import record, records, version_clause

__all__ = [
    "ExampleText",
    "ResultRecord",
    "RunRecord",
    "RunText",
    "example_text",
    "holds",
    "neighbours",
    "results",
    "run",
    "run_extra",
    "run_text",
]


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A stored run whole; its JSON columns as stored text."""

    id: str
    experiment_id: str
    example_id: str
    repetition: int
    position: int
    name: str | None
    run_type: str | None
    inputs: str | None
    outputs: str | None
    error: str | None
    start_time: str | None
    end_time: str | None
    latency_ms: float | None
    child_runs: str | None


@dataclass(frozen=True, slots=True)
class ResultRecord:
    """A stored result whole; its JSON columns as stored text."""

    key: str
    score: float | None
    value: str | None
    feedback: str | None
    comment: str | None
    correction: str | None
    metadata: str | None
    evaluator_info: str | None
    error: str | None


@dataclass(frozen=True, slots=True)
class ExampleText:
    outputs: str | None
    metadata: str | None


def run(db: ReadOnlyDatabase, experiment_id: str, run_id: str) -> RunRecord | None:
    """The experiment's run ``run_id`` (None: it holds no such run)."""
    row = db.query_one(
        "SELECT id, experiment_id, example_id, repetition, position, name, run_type, inputs, outputs, "
        "error, start_time, end_time, latency_ms, child_runs FROM runs WHERE id = ? AND experiment_id = ?",
        (run_id, experiment_id),
    )
    return record(RunRecord, row)


def results(db: ReadOnlyDatabase, run_id: str) -> list[ResultRecord]:
    """The run's results, in the order they were written."""
    rows = db.query(
        "SELECT key, score, value, feedback, comment, correction, metadata, evaluator_info, error "
        "FROM results WHERE run_id = ? ORDER BY pk",
        (run_id,),
    )
    return records(ResultRecord, rows)


def example_text(
    db: ReadOnlyDatabase, dataset_id: str, version: int | None, example_id: str
) -> ExampleText | None:
    """An example's reference outputs and metadata as of ``version`` (None: the current one)."""
    alive, alive_params = version_clause("e", version)
    row = db.query_one(
        f"SELECT outputs, metadata FROM examples e WHERE e.dataset_id = ? AND e.id = ? AND {alive}",
        (dataset_id, example_id, *alive_params),
    )
    return record(ExampleText, row)


def neighbours(
    db: ReadOnlyDatabase, experiment_id: str, position: int, repetition: int
) -> tuple[str | None, str | None]:
    """The ids of the runs just before and just after a place, in data order."""
    before = db.query_one(
        "SELECT id FROM runs WHERE experiment_id = ? AND (position, repetition) < (?, ?) "
        "ORDER BY position DESC, repetition DESC LIMIT 1",
        (experiment_id, position, repetition),
    )
    after = db.query_one(
        "SELECT id FROM runs WHERE experiment_id = ? AND (position, repetition) > (?, ?) "
        "ORDER BY position, repetition LIMIT 1",
        (experiment_id, position, repetition),
    )
    return (before["id"] if before else None, after["id"] if after else None)


@dataclass(frozen=True, slots=True)
class RunText:
    """A run's inputs and outputs (stored JSON text) and the experiment it belongs to."""

    id: str
    experiment_id: str
    experiment_name: str
    inputs: str | None
    outputs: str | None


def run_text(db: ReadOnlyDatabase, run_id: str) -> RunText | None:
    row = db.query_one(
        "SELECT u.id AS id, u.experiment_id AS experiment_id, x.name AS experiment_name, "
        "u.inputs AS inputs, u.outputs AS outputs FROM runs u "
        "JOIN experiments x ON x.id = u.experiment_id WHERE u.id = ?",
        (run_id,),
    )
    return record(RunText, row)


def run_extra(db: ReadOnlyDatabase, run_id: str) -> str | None:
    """The run's ``extra`` JSON text (where the runner keeps a target's traceback)."""
    row = db.query_one("SELECT extra FROM runs WHERE id = ?", (run_id,))
    return None if row is None else row["extra"]


def holds(db: ReadOnlyDatabase, experiment_id: str, run_id: str) -> bool:
    """Whether ``run_id`` is a run of the experiment."""
    found = db.query_one("SELECT 1 FROM runs WHERE id = ? AND experiment_id = ?", (run_id, experiment_id))
    return found is not None
