"""Compatibility path for ``assay.evaluators.judge.pairwise``."""

from assay.evaluators.judge.pairwise import (
    PAIRWISE_DEFAULT_CRITERIA,
    PAIRWISE_PROMPT,
    PAIRWISE_REFERENCE_BLOCK,
    ComparativeResults,
    ComparisonEvaluator,
    PairwiseOutcome,
    aevaluate_comparative,
    evaluate_comparative,
)

__all__ = [
    "PAIRWISE_DEFAULT_CRITERIA",
    "PAIRWISE_PROMPT",
    "PAIRWISE_REFERENCE_BLOCK",
    "ComparativeResults",
    "ComparisonEvaluator",
    "PairwiseOutcome",
    "aevaluate_comparative",
    "evaluate_comparative",
]
