"""Moved to ``assay.evaluation._pairwise_run``: the runner is evaluation, the judge is an evaluator."""

from assay.evaluation._pairwise_run import (
    ComparativeEvaluator,
    ComparativeResults,
    ExperimentRef,
    aevaluate_comparative,
    evaluate_comparative,
)

__all__ = [
    "ComparativeEvaluator",
    "ComparativeResults",
    "ExperimentRef",
    "aevaluate_comparative",
    "evaluate_comparative",
]
