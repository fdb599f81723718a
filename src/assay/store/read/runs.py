"""One stored run read whole: its text for a side-by-side reading, the traceback its
runner kept, and whether an experiment holds it."""

from __future__ import annotations

from dataclasses import dataclass

from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.sql import record

__all__ = ["RunText", "holds", "run_extra", "run_text"]


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
