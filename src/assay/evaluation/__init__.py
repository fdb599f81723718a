"""Public evaluation API, shaped after ``langsmith.evaluation``."""

from assay.evaluation._result import EvaluationResult, EvaluationResults
from assay.evaluation.evaluator import BaseEvaluator, RunEvaluator

__all__ = ["BaseEvaluator", "EvaluationResult", "EvaluationResults", "RunEvaluator"]
