"""assay: local-first evaluation for LLM applications."""

from assay.client import Client
from assay.evaluation import (
    EvaluationResult,
    EvaluationResults,
    EvaluatorSignatureError,
    ExperimentResults,
    aevaluate,
    aevaluate_existing,
    evaluate,
    evaluate_existing,
)
from assay.evaluators.judge.pairwise import evaluate_comparative
from assay.schemas import Dataset, Example, Run
from assay.tracing import traceable

__all__ = [
    "Client", "Dataset", "EvaluationResult", "EvaluationResults", "EvaluatorSignatureError",
    "Example", "ExperimentResults", "Run", "aevaluate", "aevaluate_existing", "evaluate",
    "evaluate_comparative", "evaluate_existing", "traceable",
]
