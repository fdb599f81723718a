"""assay: local-first evaluation for LLM applications.

``import assay`` loads the records, the store, the client and tracing; ``evaluate`` and
the runner behind it, ``compare``, ``evaluate_comparative`` and the evaluator families load
on first use (a CLI command or a traced app that never evaluates does not pay for them).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from assay.client import Client
from assay.errors import AssayError, EvaluatorSignatureError, NotComparableError
from assay.evaluation.metric import metric
from assay.schemas import Dataset, EvaluationResult, EvaluationResults, Example, Feedback, Run, TracerSession
from assay.tracing import (
    RunTree,
    get_current_run_tree,
    get_tracing_context,
    set_run_metadata,
    trace,
    traceable,
    tracing_context,
)

if TYPE_CHECKING:
    from assay.agreement import judge_agreement
    from assay.client.async_client import AsyncClient
    from assay.comparison import Comparison, MetricComparison, compare
    from assay.evaluation import (
        AsyncExperimentResults,
        ExperimentResults,
        RunEvaluator,
        aevaluate,
        aevaluate_existing,
        evaluate,
        evaluate_comparative,
        evaluate_existing,
    )
    from assay.testing import expect, test, unit

_LAZY = {
    "AsyncClient": "assay.client.async_client",
    "AsyncExperimentResults": "assay.evaluation",
    "Comparison": "assay.comparison",
    "ExperimentResults": "assay.evaluation",
    "MetricComparison": "assay.comparison",
    "RunEvaluator": "assay.evaluation",
    "aevaluate": "assay.evaluation",
    "aevaluate_existing": "assay.evaluation",
    "compare": "assay.comparison",
    "evaluate": "assay.evaluation",
    "evaluate_comparative": "assay.evaluation",
    "evaluate_existing": "assay.evaluation",
    "judge_agreement": "assay.agreement",
    # LangSmith's pytest helpers at the top level; they load pytest, so only on first use.
    "expect": "assay.testing",
    "test": "assay.testing",
    "unit": "assay.testing",
}

__all__ = [
    "AssayError",
    "AsyncClient",
    "AsyncExperimentResults",
    "Client",
    "Comparison",
    "Dataset",
    "EvaluationResult",
    "EvaluationResults",
    "EvaluatorSignatureError",
    "Example",
    "ExperimentResults",
    "Feedback",
    "MetricComparison",
    "NotComparableError",
    "Run",
    "RunEvaluator",
    "RunTree",
    "TracerSession",
    "aevaluate",
    "aevaluate_existing",
    "compare",
    "evaluate",
    "evaluate_comparative",
    "evaluate_existing",
    "expect",
    "get_current_run_tree",
    "get_tracing_context",
    "judge_agreement",
    "metric",
    "set_run_metadata",
    "test",
    "trace",
    "traceable",
    "tracing_context",
    "unit",
]


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module 'assay' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
