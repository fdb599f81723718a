"""LangSmith's ``langsmith.run_trees`` path: ``RunTree``."""

from assay.tracing.run_tree import RunTree

__all__ = ["RunTree"]
