"""assay: local-first evaluation for LLM applications."""

from assay.schemas import Dataset, Example, Run

__all__ = ["Dataset", "Example", "Run"]
