"""Mastra-style scorers, imported lazily (heuristic ones need the ``text`` extra, judges ``judge``)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from assay.scorers._base import Scorer, ScorerResult

if TYPE_CHECKING:  # what type checkers see; at run time each family loads on first use
    from assay.scorers.completeness import create_completeness_scorer
    from assay.scorers.heuristic import (
        create_content_similarity_scorer,
        create_keyword_coverage_scorer,
        create_textual_difference_scorer,
        create_tone_scorer,
    )
    from assay.scorers.llm import (
        create_answer_relevancy_scorer,
        create_bias_scorer,
        create_faithfulness_scorer,
        create_hallucination_scorer,
        create_toxicity_scorer,
    )
    from assay.scorers.summarization import create_summarization_scorer

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

__all__ = [
    "Scorer",
    "ScorerResult",
    "create_answer_relevancy_scorer",
    "create_bias_scorer",
    "create_completeness_scorer",
    "create_content_similarity_scorer",
    "create_faithfulness_scorer",
    "create_hallucination_scorer",
    "create_keyword_coverage_scorer",
    "create_summarization_scorer",
    "create_textual_difference_scorer",
    "create_tone_scorer",
    "create_toxicity_scorer",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'assay.scorers' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
