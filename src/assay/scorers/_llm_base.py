"""The base of model-backed scorers: the judge model, usage on every result, errors as data."""

from __future__ import annotations

from typing import Any

from assay.llm.errors import LLMError
from assay.llm.resolve import JudgeModel, resolve_structured
from assay.llm.usage import Usage, UsageMeter
from assay.schemas import EvaluationResult
from assay.scorers._base import Scorer, ScorerResult, TextLike


class JudgeScorerResult(ScorerResult):
    """``ScorerResult`` plus the token usage of the judge calls behind it."""

    usage: dict[str, Any] | None = None


class LlmScorer(Scorer):
    """Subclasses implement ``score(input, output, meter)``.

    A failed model call (after its retries) or a reply that never matched the schema makes
    a result with ``error`` set and no score, from ``run()`` as from ``evaluate(...)``.
    """

    def __init__(self, model: JudgeModel, *, name: str, scale: float = 1.0) -> None:
        super().__init__(name=name)
        if scale <= 0:
            raise ValueError(f"{name} scorer: scale must be > 0, got {scale}")
        self.chat = resolve_structured(model)
        self.scale = scale

    async def score(self, input: TextLike, output: TextLike, meter: UsageMeter) -> JudgeScorerResult:
        raise NotImplementedError

    def _run(self, input: TextLike, output: TextLike) -> ScorerResult:
        # works from a notebook too, where an event loop is already running
        from assay._aio import run_coroutine

        result: ScorerResult = run_coroutine(self._arun(input, output))
        return result

    async def _arun(self, input: TextLike, output: TextLike) -> ScorerResult:
        meter = UsageMeter()
        try:
            result = await self.score(input, output, meter)
        except LLMError as exc:
            result = JudgeScorerResult(error=f"{type(exc).__name__}: {exc}")
        result.usage = meter.total.as_metadata()
        return result

    def to_evaluation_result(self, result: ScorerResult) -> EvaluationResult:
        evaluation = super().to_evaluation_result(result)
        usage = getattr(result, "usage", None) or Usage().as_metadata()
        evaluation.metadata = {**evaluation.metadata, "usage": usage, "model": self.model_name}
        return evaluation

    def error_result(self, exc: BaseException) -> EvaluationResult:
        evaluation = super().error_result(exc)
        evaluation.metadata["usage"] = Usage().as_metadata()
        evaluation.metadata["model"] = self.model_name
        return evaluation

    @property
    def model_name(self) -> str:
        return self.chat.client.model_name


def ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def quoted(items: list[str], limit: int = 5) -> str:
    shown = "; ".join(f"'{item}'" for item in items[:limit])
    more = len(items) - limit
    return shown + (f"; and {more} more" if more > 0 else "")
