"""The scorer face of the judge core (``evaluators.judge._core``): usage on every result,
a failed model call as a result with ``error`` set."""

from __future__ import annotations

from typing import Any

from assay._aio import run_coroutine
from assay.errors import LLMError
from assay.evaluators.judge import JudgeCore
from assay.llm.resolve import JudgeModel
from assay.llm.structured import StructuredChat
from assay.llm.usage import UsageMeter
from assay.schemas import EvaluationResult
from assay.scorers._base import Scorer, ScorerResult, TextLike


class JudgeScorerResult(ScorerResult):
    """``ScorerResult`` plus the token usage of the judge calls behind it."""

    usage: dict[str, Any] | None = None


class LLMScorer(Scorer):
    """Subclasses implement ``score(input, output, meter)``.

    A failed model call (after its retries) or a reply that never matched the schema makes
    a result with ``error`` set and no score, from ``run()`` as from ``evaluate(...)``.
    """

    def __init__(self, model: JudgeModel, *, name: str, scale: float = 1.0) -> None:
        super().__init__(name=name)
        if scale <= 0:
            raise ValueError(f"{name} scorer: scale must be > 0, got {scale}")
        self.core = JudgeCore(model)
        self.scale = scale

    @property
    def chat(self) -> StructuredChat:
        return self.core.chat

    async def score(self, input: TextLike, output: TextLike, meter: UsageMeter) -> JudgeScorerResult:
        raise NotImplementedError

    def _run(self, input: TextLike, output: TextLike) -> ScorerResult:
        # works from a notebook too, where an event loop is already running
        return run_coroutine(self._arun(input, output))

    async def _arun(self, input: TextLike, output: TextLike) -> ScorerResult:
        outcome = await self.core.metered(
            lambda meter: self.score(input, output, meter), failures=(LLMError,)
        )
        result = outcome.value
        if outcome.error is not None or result is None:
            result = JudgeScorerResult(error=f"{type(outcome.error).__name__}: {outcome.error}")
        result.usage = outcome.usage.as_metadata()
        return result

    def to_evaluation_result(self, result: ScorerResult) -> EvaluationResult:
        evaluation = super().to_evaluation_result(result)
        metadata = self.core.metadata(None)
        metadata["usage"] = getattr(result, "usage", None) or metadata["usage"]
        evaluation.metadata = {**evaluation.metadata, **metadata}
        return evaluation

    def error_result(self, exc: BaseException) -> EvaluationResult:
        evaluation = super().error_result(exc)
        evaluation.metadata.update(self.core.metadata(None))
        return evaluation

    @property
    def model_name(self) -> str:
        return self.core.model_name


def ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def quoted(items: list[str], limit: int = 5) -> str:
    shown = "; ".join(f"'{item}'" for item in items[:limit])
    more = len(items) - limit
    return shown + (f"; and {more} more" if more > 0 else "")
