"""Public evaluation API, shaped after ``langsmith.evaluation``.

``evaluate_comparative`` and ``aevaluate_comparative`` load on first use: the comparison
runner brings the model layer (``assay.llm``) with it, which ``evaluate`` does not need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from assay.errors import DataError, EvaluatorSignatureError, ExperimentError, RowFailedError
from assay.evaluation._api import aevaluate, evaluate
from assay.evaluation._interrupt import ExperimentInterrupted
from assay.evaluation._pairwise_evaluator import DynamicComparisonRunEvaluator, comparison_evaluator
from assay.evaluation._rescore import aevaluate_existing, evaluate_existing
from assay.evaluation._results import AsyncExperimentResults, ExperimentResults
from assay.evaluation.evaluator import BaseEvaluator, RunEvaluator, run_evaluator
from assay.schemas import ComparisonEvaluationResult, EvaluationResult, EvaluationResults

if TYPE_CHECKING:
    from assay.evaluation._pairwise_run import aevaluate_comparative, evaluate_comparative

_LAZY = {
    "aevaluate_comparative": "assay.evaluation._pairwise_run",
    "evaluate_comparative": "assay.evaluation._pairwise_run",
}

__all__ = [
    "AsyncExperimentResults",
    "BaseEvaluator",
    "ComparisonEvaluationResult",
    "DataError",
    "DynamicComparisonRunEvaluator",
    "EvaluationResult",
    "EvaluationResults",
    "EvaluatorSignatureError",
    "ExperimentError",
    "ExperimentInterrupted",
    "ExperimentResults",
    "RowFailedError",
    "RunEvaluator",
    "aevaluate",
    "aevaluate_comparative",
    "aevaluate_existing",
    "comparison_evaluator",
    "evaluate",
    "evaluate_comparative",
    "evaluate_existing",
    "run_evaluator",
]


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module 'assay.evaluation' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
