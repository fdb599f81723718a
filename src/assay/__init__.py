"""assay: local-first evaluation for LLM applications."""

from assay.client import Client
from assay.comparison import Comparison, MetricComparison, NotComparableError, compare
from assay.evaluation import (
    EvaluationResult,
    EvaluationResults,
    EvaluatorSignatureError,
    ExperimentResults,
    aevaluate,
    evaluate,
)
from assay.evaluation.metric import metric
from assay.evaluators.judge.pairwise import evaluate_comparative
from assay.schemas import Dataset, Example, Run
from assay.tracing import traceable

__all__ = [
    "Client", "Comparison", "Dataset", "EvaluationResult", "EvaluationResults", "EvaluatorSignatureError",
    "Example", "ExperimentResults", "MetricComparison", "NotComparableError", "Run", "aevaluate",
    "compare", "evaluate", "evaluate_comparative", "metric", "traceable",
]
