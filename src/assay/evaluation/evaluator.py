"""Evaluator base classes, shaped after ``langsmith.evaluation.evaluator``.

``BaseEvaluator`` (see ``assay.evaluation._base``) is the class to subclass;
:func:`run_evaluator` turns a function with bindable parameters into one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from assay._aio import run_coroutine
from assay.evaluation._base import BaseEvaluator, EvaluatorOutput, RunEvaluator
from assay.evaluation._binding import RowEvaluator, bind_row_evaluator
from assay.evaluation._names import EVALUATOR_NAMES, resolve_evaluator_name
from assay.evaluation._pairwise_evaluator import DynamicComparisonRunEvaluator, comparison_evaluator
from assay.evaluation._returns import normalize_returned
from assay.schemas import ComparisonEvaluationResult, EvaluationResult, EvaluationResults, Example, Run

__all__ = [
    # for the evaluator families and the evaluator service: binding any evaluator to rows,
    # reading what it returned, and the evaluators named by string ("exact_match")
    "EVALUATOR_NAMES",
    "RowEvaluator",
    "bind_row_evaluator",
    "normalize_returned",
    "resolve_evaluator_name",
    # LangSmith's
    "BaseEvaluator",
    "ComparisonEvaluationResult",
    "DynamicComparisonRunEvaluator",
    "DynamicRunEvaluator",
    "EvaluationResult",
    "EvaluationResults",
    "EvaluatorOutput",
    "RunEvaluator",
    "comparison_evaluator",
    "run_evaluator",
]


class DynamicRunEvaluator(BaseEvaluator):
    """A function turned into a RunEvaluator by :func:`run_evaluator`."""

    def __init__(self, func: Callable[..., Any]) -> None:
        super().__init__(name=getattr(func, "__name__", "evaluator"))
        self.func = func
        self._bound = bind_row_evaluator(func)
        self.needs_outputs = self._bound.needs_outputs

    @property
    def is_async(self) -> bool:
        return self._bound.is_async

    def _evaluate(self, run: Run, example: Example | None = None) -> Any:
        if self._bound.is_async:
            return run_coroutine(self._bound.call_async(run, _example_or_empty(example)))
        return self._bound.call_sync(run, _example_or_empty(example))

    async def _aevaluate(self, run: Run, example: Example | None = None) -> Any:
        if self._bound.is_async:
            return await self._bound.call_async(run, _example_or_empty(example))
        return await asyncio.to_thread(self._bound.call_sync, run, _example_or_empty(example))

    def __call__(self, run: Run, example: Example | None = None) -> EvaluatorOutput:
        return self.evaluate(run, example)


def _example_or_empty(example: Example | None) -> Example:
    return example if example is not None else Example()


def run_evaluator(func: Callable[..., Any]) -> DynamicRunEvaluator:
    """Decorator (LangSmith's): make a function with bindable parameters a RunEvaluator."""
    return DynamicRunEvaluator(func)
