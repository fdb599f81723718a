"""The traces of a tracing project (runs stored by ``Client.create_run``): a list of root
runs, and one trace as the tree the row page shows."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from assay.store import codec
from assay.store.read import traces
from assay.store.read.database import ReadOnlyDatabase
from assay.ui.errors import NotFound
from assay.ui.models import ExperimentSummary, RunNode
from assay.ui.queries.trace import MAX_DEPTH

__all__ = ["TRACES_SHOWN", "trace_detail", "trace_list"]

TRACES_SHOWN = 50
"""How many traces the experiment page lists (the newest)."""


def trace_list(db: ReadOnlyDatabase, experiment: ExperimentSummary) -> tuple[int, list[tuple[str, RunNode]]]:
    """(how many traces, the newest ones as (run id, root run without its children))."""
    total = traces.count_traces(db, experiment.id)
    if not total:
        return 0, []
    roots = traces.trace_roots(db, experiment.id, limit=TRACES_SHOWN)
    return total, [(row["id"], _node(_fields(row), None, {}, 0)) for row in roots]


def trace_detail(db: ReadOnlyDatabase, experiment: ExperimentSummary, run_id: str) -> RunNode:
    """The trace of root run ``run_id`` as a tree, each level in start order."""
    rows = traces.trace_runs(db, experiment.id, run_id)
    by_id = {row["id"]: _fields(row) for row in rows}
    root = by_id.get(run_id)
    if root is None or root["parent_run_id"] is not None:
        raise NotFound(f"experiment {experiment.name!r} has no trace with root run id {run_id!r}")
    children: dict[str, list[dict[str, Any]]] = {}
    for fields in by_id.values():
        if fields["parent_run_id"] is not None:
            children.setdefault(fields["parent_run_id"], []).append(fields)
    return _node(root, root["start_time"], children, 0)


def _fields(row: Any) -> dict[str, Any]:
    fields = codec.loads(row["run"]) or {}
    return {**fields, "id": row["id"], "parent_run_id": row["parent_run_id"], "start_time": row["start_time"]}


def _node(
    fields: dict[str, Any], root_start: str | None, children: dict[str, list[dict[str, Any]]], depth: int
) -> RunNode:
    start, end = _moment(fields.get("start_time")), _moment(fields.get("end_time"))
    root = _moment(root_start)
    below = children.get(fields["id"], []) if depth < MAX_DEPTH else []
    return RunNode(
        name=_text(fields.get("name")),
        run_type=_text(fields.get("run_type")),
        start_time=_text(fields.get("start_time")),
        end_time=_text(fields.get("end_time")),
        offset_ms=None if root is None or start is None else (start - root).total_seconds() * 1000.0,
        duration_ms=None if start is None or end is None else (end - start).total_seconds() * 1000.0,
        error=_text(fields.get("error")),
        inputs=fields.get("inputs") if root_start is not None else None,
        outputs=fields.get("outputs") if root_start is not None else None,
        children=[_node(child, root_start, children, depth + 1) for child in below],
    )


def _moment(value: Any) -> datetime | None:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
