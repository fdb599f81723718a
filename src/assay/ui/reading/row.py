"""What a row page adds to the stored row: its target's traceback, its outputs against
its reference."""

from __future__ import annotations

from assay.store.read import runs
from assay.store.read.database import ReadOnlyDatabase
from assay.ui.models import RowDetail
from assay.ui.queries._sql import loads
from assay.ui.reading.diff import Diff, as_diff_text, side_by_side

__all__ = ["reference_diff", "target_traceback"]


def target_traceback(db: ReadOnlyDatabase, run_id: str) -> str | None:
    """The traceback the runner kept when the target raised (the run's ``extra``)."""
    extra = loads(runs.run_extra(db, run_id))
    found = extra.get("traceback") if isinstance(extra, dict) else None
    return found if isinstance(found, str) else None


def reference_diff(row: RowDetail) -> Diff | None:
    if row.reference_outputs is None or row.outputs is None:
        return None
    return side_by_side(as_diff_text(row.reference_outputs), as_diff_text(row.outputs))
