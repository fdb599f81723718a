"""Mastra-style scorers, imported lazily (heuristic ones need the ``text`` extra, judges ``judge``)."""

from __future__ import annotations

import importlib
from typing import Any

from assay.scorers._base import Scorer, ScorerResult

_HOMES = {
    "create_completeness_scorer": "assay.scorers.completeness",
    "create_content_similarity_scorer": "assay.scorers.heuristic",
    "create_keyword_coverage_scorer": "assay.scorers.heuristic",
    "create_textual_difference_scorer": "assay.scorers.heuristic",
    "create_tone_scorer": "assay.scorers.heuristic",
    "create_summarization_scorer": "assay.scorers.summarization",
    "create_faithfulness_scorer": "assay.scorers.llm",
    "create_hallucination_scorer": "assay.scorers.llm",
    "create_answer_relevancy_scorer": "assay.scorers.llm",
    "create_toxicity_scorer": "assay.scorers.llm",
    "create_bias_scorer": "assay.scorers.llm",
}

__all__ = ["Scorer", "ScorerResult", *sorted(_HOMES)]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'assay.scorers' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
