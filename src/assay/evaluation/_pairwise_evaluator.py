"""Comparative evaluators, LangSmith's ``comparison_evaluator``: one function sees the runs
of several experiments on the same example and returns a score per run."""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from assay._aio import run_coroutine
from assay.errors import EvaluatorSignatureError
from assay.schemas import ComparisonEvaluationResult, Example, Run

COMPARISON_PARAMETERS = ("runs", "example", "inputs", "outputs", "reference_outputs")


class DynamicComparisonRunEvaluator:
    """Wraps ``func(runs, example)`` or a function taking any of ``COMPARISON_PARAMETERS``
    by name; it returns a list of scores (in run order), a dict ``{"scores": {run_id:
    score}, "key"?, "comment"?}``, or a ``ComparisonEvaluationResult``."""

    def __init__(self, func: Callable[..., Any], afunc: Callable[..., Any] | None = None) -> None:
        if afunc is not None and inspect.iscoroutinefunction(func):
            raise TypeError(
                "func is a coroutine function and afunc is given too; pass a sync func with afunc"
            )
        self._name = str(getattr(func, "__name__", "DynamicComparisonRunEvaluator"))
        self.__name__ = self._name
        self._sync = None if inspect.iscoroutinefunction(func) else func
        self._async = afunc or (func if inspect.iscoroutinefunction(func) else None)
        for given in (func, afunc):
            if given is not None:
                _binds_by_name(given, self._name)  # refuse an unusable signature now

    @property
    def is_async(self) -> bool:
        return self._async is not None

    def compare_runs(self, runs: Sequence[Run], example: Example | None = None) -> ComparisonEvaluationResult:
        if self._sync is None:
            result: ComparisonEvaluationResult = run_coroutine(self.acompare_runs(runs, example))
            return result
        args, kwargs = self._args(self._sync, runs, example)
        return self._format(self._sync(*args, **kwargs), runs)

    async def acompare_runs(
        self, runs: Sequence[Run], example: Example | None = None
    ) -> ComparisonEvaluationResult:
        if self._async is None:
            return await asyncio.to_thread(self.compare_runs, runs, example)
        args, kwargs = self._args(self._async, runs, example)
        return self._format(await self._async(*args, **kwargs), runs)

    def __call__(self, runs: Sequence[Run], example: Example | None = None) -> ComparisonEvaluationResult:
        return self.compare_runs(runs, example)

    def __repr__(self) -> str:
        return f"<DynamicComparisonRunEvaluator {self._name}>"

    def _args(
        self, func: Callable[..., Any], runs: Sequence[Run], example: Example | None
    ) -> tuple[list[Any], dict[str, Any]]:
        if not _binds_by_name(func, self._name):
            return [list(runs), example], {}
        available = {
            "runs": list(runs),
            "example": example,
            "inputs": example.inputs if example else {},
            "outputs": [run.outputs or {} for run in runs],
            "reference_outputs": (example.outputs or {}) if example else {},
        }
        params = inspect.signature(func).parameters
        return [], {name: available[name] for name in params if name in available}

    def _format(self, result: Any, runs: Sequence[Run]) -> ComparisonEvaluationResult:
        if isinstance(result, ComparisonEvaluationResult):
            if result.source_run_id is None:
                result.source_run_id = uuid.uuid4()
            return result
        if isinstance(result, (list, tuple)):
            if len(result) != len(runs):
                raise ValueError(
                    f"comparative evaluator {self._name!r} returned {len(result)} scores for {len(runs)} runs"
                )
            result = {"scores": {run.id: score for run, score in zip(runs, result)}}
        if not isinstance(result, dict) or not isinstance(result.get("scores"), dict):
            raise ValueError(
                f"comparative evaluator {self._name!r} must return a list of scores (one per run), "
                f"{{'scores': {{run_id: score}}}} or a ComparisonEvaluationResult; got {result!r}"
            )
        return ComparisonEvaluationResult(**{"key": self._name, "source_run_id": uuid.uuid4(), **result})


def _binds_by_name(func: Callable[..., Any], name: str) -> bool:
    """LangSmith's rule: parameters named from ``COMPARISON_PARAMETERS`` bind by name;
    otherwise exactly two required parameters are (runs, example)."""
    params = [p for p in inspect.signature(func).parameters.values() if p.kind is not p.VAR_KEYWORD]
    required = [p.name for p in params if p.default is p.empty]
    known = all(p.name in COMPARISON_PARAMETERS or p.default is not p.empty for p in params)
    if not params or (not known and len(required) != 2):
        raise EvaluatorSignatureError(
            f"comparative evaluator {name!r} has the signature {name}{inspect.signature(func)}; "
            f"take (runs, example), or parameters named from {list(COMPARISON_PARAMETERS)}"
        )
    return known and [p.name for p in params] != ["runs", "example"]


def comparison_evaluator(func: Callable[..., Any]) -> DynamicComparisonRunEvaluator:
    """Decorator (LangSmith's): make ``func`` a comparative evaluator."""
    return DynamicComparisonRunEvaluator(func)


def as_comparative_function(evaluator: Any) -> Any:
    """A comparative evaluator in the form ``evaluate_comparative`` calls:
    ``(runs, example) -> {"key", "scores", "comment"}``. Judges pass through unchanged."""
    from assay.evaluation._pairwise_run import PairwiseEvaluator

    if isinstance(evaluator, PairwiseEvaluator):
        return evaluator
    wrapped = (
        evaluator
        if isinstance(evaluator, DynamicComparisonRunEvaluator)
        else DynamicComparisonRunEvaluator(evaluator)
    )

    async def compare(runs: Sequence[Run], example: Example | None) -> dict[str, Any]:
        result = await wrapped.acompare_runs(runs, example)
        comment = result.comment if isinstance(result.comment, str) else None
        return {"key": result.key, "scores": result.scores, "comment": comment}

    compare.__name__ = wrapped._name
    return compare
