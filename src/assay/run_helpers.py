"""LangSmith's ``langsmith.run_helpers`` path: ``traceable``, ``trace``, ``tracing_context``."""

from assay.tracing import (
    get_current_run_tree,
    get_tracing_context,
    is_traceable_function,
    set_run_metadata,
    trace,
    traceable,
    tracing_context,
)

__all__ = [
    "get_current_run_tree",
    "get_tracing_context",
    "is_traceable_function",
    "set_run_metadata",
    "trace",
    "traceable",
    "tracing_context",
]
