"""Tracing: ``@traceable``, ``trace()``, ``tracing_context()`` and ``RunTree``.

Also importable from LangSmith's paths, ``assay.run_helpers`` and ``assay.run_trees``.
"""

from collections.abc import Iterator
from contextlib import contextmanager

from assay.schemas import Run
from assay.tracing._context import (
    current_parent,
    get_current_run,
    reset_current_run,
    set_current_run,
    set_trace_sink,
)
from assay.tracing._trace import (
    get_current_run_tree,
    get_tracing_context,
    set_run_metadata,
    trace,
    tracing_context,
)
from assay.tracing._traceable import is_traceable_function, traceable
from assay.tracing.run_tree import RunTree


@contextmanager
def trace_into(run: Run) -> Iterator[Run]:
    """Make ``run`` the parent of every traceable call inside the block."""
    token = set_current_run(run)
    try:
        yield run
    finally:
        reset_current_run(token)


__all__ = [
    "RunTree",
    "current_parent",
    "get_current_run",
    "get_current_run_tree",
    "get_tracing_context",
    "is_traceable_function",
    "reset_current_run",
    "set_current_run",
    "set_run_metadata",
    "set_trace_sink",
    "trace",
    "trace_into",
    "traceable",
    "tracing_context",
]
