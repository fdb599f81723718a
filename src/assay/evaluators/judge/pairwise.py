"""Pairwise judging of experiments: the LLM judge ``ComparisonEvaluator`` and its prompts
(the runner is ``assay.evaluate_comparative``)."""

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
    "ComparisonEvaluator",
    "PairwiseOutcome",
]
