"""assay: local-first evaluation for LLM applications."""

from assay.client import Client
from assay.evaluation import (
    AsyncExperimentResults,
    EvaluationResult,
    EvaluationResults,
    EvaluatorSignatureError,
    ExperimentResults,
    RunEvaluator,
    aevaluate,
    evaluate,
)
from assay.evaluators.judge.pairwise import evaluate_comparative
from assay.schemas import Dataset, Example, Feedback, Run, TracerSession
from assay.tracing import (
    RunTree,
    get_current_run_tree,
    get_tracing_context,
    trace,
    traceable,
    tracing_context,
)

__all__ = [
    "AsyncExperimentResults", "Client", "Dataset", "EvaluationResult", "EvaluationResults",
    "EvaluatorSignatureError", "Example", "ExperimentResults", "Feedback", "Run", "RunEvaluator",
    "RunTree", "TracerSession", "aevaluate", "evaluate", "evaluate_comparative",
    "get_current_run_tree", "get_tracing_context", "trace", "traceable", "tracing_context",
]
