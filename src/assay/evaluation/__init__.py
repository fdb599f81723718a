"""Public evaluation API, shaped after ``langsmith.evaluation``."""

from assay.evaluation._api import aevaluate, evaluate
from assay.evaluation._binding import EvaluatorSignatureError
from assay.evaluation._comparison import DynamicComparisonRunEvaluator, comparison_evaluator
from assay.evaluation._data import DataError
from assay.evaluation._experiment import ExperimentError
from assay.evaluation._results import AsyncExperimentResults, ExperimentResults
from assay.evaluation._runner import RowFailedError
from assay.evaluation.evaluator import BaseEvaluator, RunEvaluator, run_evaluator
from assay.evaluators.judge.pairwise import aevaluate_comparative, evaluate_comparative
from assay.schemas import ComparisonEvaluationResult, EvaluationResult, EvaluationResults

__all__ = [
    "AsyncExperimentResults", "BaseEvaluator", "ComparisonEvaluationResult", "DataError",
    "DynamicComparisonRunEvaluator", "comparison_evaluator", "EvaluationResult", "EvaluationResults",
    "EvaluatorSignatureError", "ExperimentError", "ExperimentResults", "RowFailedError",
    "RunEvaluator", "aevaluate", "aevaluate_comparative", "evaluate", "evaluate_comparative",
    "run_evaluator",
]
