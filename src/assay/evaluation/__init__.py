"""Public evaluation API, shaped after ``langsmith.evaluation``.

Every name loads on first use: ``import assay`` needs ``metric`` from here, not the runner
(``evaluate`` and the ~30 modules behind it load when a program first names it), and
``evaluate_comparative`` brings the model layer (``assay.llm``) with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from assay.errors import DataError, EvaluatorSignatureError, ExperimentError, RowFailedError
from assay.schemas import ComparisonEvaluationResult, EvaluationResult, EvaluationResults

if TYPE_CHECKING:
    from assay.evaluation._api import aevaluate, evaluate
    from assay.evaluation._data import load_file
    from assay.evaluation._interrupt import ExperimentInterrupted
    from assay.evaluation._pairwise_evaluator import DynamicComparisonRunEvaluator, comparison_evaluator
    from assay.evaluation._pairwise_run import aevaluate_comparative, evaluate_comparative
    from assay.evaluation._rescore import aevaluate_existing, evaluate_existing
    from assay.evaluation._results import AsyncExperimentResults, ExperimentResults
    from assay.evaluation.evaluator import BaseEvaluator, RunEvaluator, run_evaluator

_LAZY = {
    "AsyncExperimentResults": "assay.evaluation._results",
    "BaseEvaluator": "assay.evaluation.evaluator",
    "DynamicComparisonRunEvaluator": "assay.evaluation._pairwise_evaluator",
    "ExperimentInterrupted": "assay.evaluation._interrupt",
    "ExperimentResults": "assay.evaluation._results",
    "RunEvaluator": "assay.evaluation.evaluator",
    "aevaluate": "assay.evaluation._api",
    "aevaluate_comparative": "assay.evaluation._pairwise_run",
    "aevaluate_existing": "assay.evaluation._rescore",
    "comparison_evaluator": "assay.evaluation._pairwise_evaluator",
    "evaluate": "assay.evaluation._api",
    "evaluate_comparative": "assay.evaluation._pairwise_run",
    "evaluate_existing": "assay.evaluation._rescore",
    "load_file": "assay.evaluation._data",
    "run_evaluator": "assay.evaluation.evaluator",
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
    "load_file",
    "run_evaluator",
]


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module 'assay.evaluation' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
