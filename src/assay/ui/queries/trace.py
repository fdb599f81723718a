"""A run and its child runs as a tree, with each step's start offset and duration."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from assay.store.read.runs import RunRecord
from assay.ui.models import RunNode
from assay.ui.queries._sql import loads

__all__ = ["MAX_DEPTH", "run_tree"]


MAX_DEPTH = 64
"""Child runs nested deeper than this are cut: a page must not recurse without end."""


def run_tree(run: RunRecord) -> RunNode:
    """The root run (a stored run) with its stored child runs."""
    root_start = _parse(run.start_time)
    children = loads(run.child_runs) or []
    return RunNode(
        name=run.name,
        run_type=run.run_type,
        start_time=run.start_time,
        end_time=run.end_time,
        offset_ms=0.0 if root_start else None,
        duration_ms=run.latency_ms,
        error=run.error,
        children=[_node(child, root_start, 1) for child in children if isinstance(child, dict)],
    )


def _node(data: dict[str, Any], root_start: datetime | None, depth: int) -> RunNode:
    start, end = _parse(data.get("start_time")), _parse(data.get("end_time"))
    children = data.get("child_runs") or []
    return RunNode(
        name=_text(data.get("name")),
        run_type=_text(data.get("run_type")),
        start_time=_text(data.get("start_time")),
        end_time=_text(data.get("end_time")),
        offset_ms=_ms(root_start, start),
        duration_ms=_ms(start, end),
        error=_text(data.get("error")),
        inputs=data.get("inputs"),
        outputs=data.get("outputs"),
        children=[
            _node(child, root_start, depth + 1)
            for child in children
            if isinstance(child, dict) and depth < MAX_DEPTH
        ],
    )


def _parse(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _ms(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None or (start.tzinfo is None) != (end.tzinfo is None):
        return None
    return (end - start).total_seconds() * 1000.0


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
