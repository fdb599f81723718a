"""The evaluator face of the judge core: what the judge sees of a run, results with usage."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from assay._aio import run_coroutine
from assay.evaluation.evaluator import BaseEvaluator
from assay.evaluators.judge._core import JudgeCore
from assay.evaluators.judge._text import render
from assay.llm.resolve import JudgeModel
from assay.llm.structured import StructuredChat
from assay.llm.usage import Usage, UsageMeter
from assay.schemas import EvaluationResult, Example, Run


@dataclass(frozen=True)
class JudgeInput:
    input: str
    output: str
    reference: str | None


@dataclass(frozen=True)
class DataKeys:
    """Which key of inputs / outputs / reference outputs to show (None: the whole dict)."""

    input: str | None = None
    prediction: str | None = None
    reference: str | None = None


class LLMJudge(BaseEvaluator):
    """An async evaluator that asks a judge model; subclasses implement ``judge``.

    The model is resolved when the judge is built, so a missing configuration fails before
    any experiment starts. A failed judgement is a result with ``error`` set (one per key
    the judge would have produced), carrying the usage spent on it.
    """

    def __init__(
        self,
        model: JudgeModel = None,
        *,
        name: str | None = None,
        keys: DataKeys = DataKeys(),
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name, **kwargs)
        self.core = JudgeCore(model)
        self.keys = keys

    @property
    def chat(self) -> StructuredChat:
        return self.core.chat

    @property
    def model_name(self) -> str:
        """The judge model's name, as recorded in every result's metadata."""
        return self.core.model_name

    @property
    def result_keys(self) -> list[str]:
        return [self.name]

    async def judge(self, data: JudgeInput, meter: UsageMeter) -> list[EvaluationResult]:
        raise NotImplementedError

    def needs_reference(self) -> bool:
        return False

    def _evaluate(self, run: Run, example: Example | None = None) -> Any:
        # works from a notebook too, where an event loop is already running
        return run_coroutine(self._aevaluate(run, example))

    async def _aevaluate(self, run: Run, example: Example | None = None) -> Any:
        outcome = await self.core.metered(lambda meter: self.judge(self.judge_input(run, example), meter))
        if outcome.error is not None:  # failures are data: one errored result per key
            failed = self.error_result(outcome.error)
            results = [failed.model_copy(update={"key": key}, deep=True) for key in self.result_keys]
        else:
            results = outcome.value or []
        return self._with_usage(results, outcome.usage, outcome.transcript)

    def as_target(
        self,
        *,
        input_key: str = "input",
        output_key: str = "output",
        reference_key: str | None = None,
    ) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
        """This judge as the *target* of an experiment over a human-labelled dataset.

        Each example's inputs hold what the judge reads (``input_key``, ``output_key`` and,
        for judges that need one, ``reference_key``); its reference outputs hold people's
        label. The run's outputs are the verdict (``score``, ``value``, ``comment``,
        ``usage``; one such dict per key for a judge with several), so calibrating a judge
        is an ordinary experiment: resumable, cached, and read by
        ``judge_agreement(experiment, "outputs.score", "reference.label")``.
        """
        if reference_key is None and self.needs_reference():
            raise ValueError(f"{type(self).__name__} needs a reference: pass reference_key=")

        async def judged(inputs: dict[str, Any]) -> dict[str, Any]:
            data = JudgeInput(
                input=render(inputs, input_key, what="inputs") if input_key in inputs else "",
                output=render(inputs, output_key, what="inputs"),
                reference=render(inputs, reference_key, what="inputs") if reference_key else None,
            )
            outcome = await self.core.metered(lambda meter: self.judge(data, meter))
            if outcome.error is not None:
                raise outcome.error
            verdicts = {
                r.key: {"score": r.score, "value": r.value, "comment": r.comment} for r in outcome.value or []
            }
            usage = outcome.usage.as_metadata()
            if len(verdicts) == 1:
                return {**next(iter(verdicts.values())), "usage": usage}
            return {**verdicts, "usage": usage}

        judged.__name__ = f"{self.name}_judge"
        return judged

    def judge_input(self, run: Run, example: Example | None) -> JudgeInput:
        if run.outputs is None:
            failure = f" (the target failed: {run.error})" if run.error else ""
            raise ValueError(f"the run has no outputs to judge{failure}")
        inputs = example.inputs if example is not None else run.inputs
        reference: str | None = None
        if example is not None and example.outputs is not None:
            reference = render(example.outputs, self.keys.reference, what="reference outputs")
        if reference is None and self.needs_reference():
            raise ValueError(f"{type(self).__name__} needs a reference: the example has no outputs")
        return JudgeInput(
            input=render(inputs, self.keys.input, what="inputs"),
            output=render(run.outputs, self.keys.prediction, what="run outputs"),
            reference=reference,
        )

    def _with_usage(
        self, results: list[EvaluationResult], usage: Usage, transcript: dict[str, Any] | None = None
    ) -> list[EvaluationResult]:
        # One call may yield several results: the first carries the usage, so sums stay right;
        # each shows the call it came from.
        for index, result in enumerate(results):
            recorded = self.core.metadata(usage if index == 0 else None, transcript)
            result.metadata = {**result.metadata, **recorded}
        return results


def verdict_score(value: str) -> int:
    return 1 if value == "Y" else 0
