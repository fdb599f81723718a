"""Pairwise comparison of experiments: the LLM judge ``ComparisonEvaluator`` and its runner."""

from assay.evaluation._pairwise_run import (
    ComparativeResults,
    aevaluate_comparative,
    evaluate_comparative,
)
from assay.evaluators.judge._pairwise_judge import ComparisonEvaluator, PairwiseOutcome
from assay.evaluators.judge._prompts import (
    PAIRWISE_DEFAULT_CRITERIA,
    PAIRWISE_PROMPT,
    PAIRWISE_REFERENCE_BLOCK,
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
