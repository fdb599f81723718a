"""Mastra-style scorers: ``create_*_scorer()`` returns a ``Scorer``.

``scorer.run(input=..., output=...)`` scores one pair (strings or chat-message lists) and
returns a ``ScorerResult``; the same object is a ``BaseEvaluator``, so ``evaluate(...)``
accepts it and reads the input from the example and the output from the run.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from pydantic import BaseModel, Field

from assay._aio import run_coroutine
from assay._output_text import output_text
from assay.evaluation.evaluator import BaseEvaluator
from assay.schemas import EvaluationResult, Example, Run

TextLike = Any  # a string, a chat-message list, or a dict holding one


class ScorerResult(BaseModel):
    """What ``Scorer.run`` returns (Mastra's shape, in snake_case)."""

    run_id: str = Field(default_factory=lambda: str(uuid.uuid4()))
    score: float | None = None
    reason: str | None = None
    preprocess_step_result: dict[str, Any] | None = None
    analyze_step_result: dict[str, Any] | None = None
    error: str | None = None

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    @property
    def extract_step_result(self) -> dict[str, Any] | None:
        """The older name of the completeness scorer's preprocess step (Mastra's ``extractStepResult``)."""
        return self.preprocess_step_result


def to_text(value: TextLike) -> str:
    """A string, a chat-message list or a dict of them as plain text (:func:`output_text`)."""
    return output_text(value)


_MASTRA_RUN_KEYS = {
    "input",
    "output",
    "runId",
    "run_id",
    "groundTruth",
    "ground_truth",
    "runtimeContext",
    "runtime_context",
}


def _pair(input: TextLike, output: TextLike) -> tuple[TextLike, TextLike]:
    """Mastra passes one object holding both; unpack it rather than score the object."""
    if output is None and isinstance(input, dict) and "output" in input and set(input) <= _MASTRA_RUN_KEYS:
        return input.get("input"), input["output"]
    return input, output


class Scorer(BaseEvaluator):
    """Override ``_run(input, output)`` (sync) or ``_arun(input, output)`` (async)."""

    def _run(self, input: TextLike, output: TextLike) -> ScorerResult:
        if type(self)._arun is not Scorer._arun:
            result: ScorerResult = run_coroutine(self._arun(input, output))
            return result
        raise NotImplementedError(f"{type(self).__name__} must override _run or _arun")

    async def _arun(self, input: TextLike, output: TextLike) -> ScorerResult:
        return await asyncio.to_thread(self._run, input, output)

    @property
    def is_async(self) -> bool:
        return type(self)._arun is not Scorer._arun

    def run(self, input: TextLike = None, output: TextLike = None) -> ScorerResult:
        """``run(input=..., output=...)``, or Mastra's one object ``run({"input", "output"})``."""
        return self._run(*_pair(input, output))

    async def arun(self, input: TextLike = None, output: TextLike = None) -> ScorerResult:
        return await self._arun(*_pair(input, output))

    # as an evaluator
    def scorer_input(self, run: Run, example: Example | None) -> TextLike:
        return example.inputs if example is not None else run.inputs

    def scorer_output(self, run: Run, example: Example | None) -> TextLike:
        return run.outputs

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        result = self._run(self.scorer_input(run, example), self.scorer_output(run, example))
        return self.to_evaluation_result(result)

    async def _aevaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        result = await self._arun(self.scorer_input(run, example), self.scorer_output(run, example))
        return self.to_evaluation_result(result)

    def to_evaluation_result(self, result: ScorerResult) -> EvaluationResult:
        metadata = {
            key: value
            for key, value in (
                ("preprocess_step_result", result.preprocess_step_result),
                ("analyze_step_result", result.analyze_step_result),
            )
            if value is not None
        }
        return EvaluationResult(
            key=self.name,
            score=None if result.error else result.score,
            comment=result.reason,
            metadata=metadata,
            error=result.error,
        )
