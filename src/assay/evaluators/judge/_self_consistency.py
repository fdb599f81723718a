"""Self-consistency: ask a judge n times at a temperature, keep the majority (or the mean),
and record how far the samples agreed as the result's confidence.

``metadata["confidence"]`` is the share of samples that gave the kept verdict (1.0: all
agreed); the UI's "least confident rows" queue reads it. Samples 1..n-1 are cached apart
from sample 0, so a re-run replays the same n replies.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from assay.evaluation import BaseEvaluator
from assay.evaluators.judge._base import JudgeInput, LLMJudge
from assay.llm.structured import judge_sample
from assay.llm.usage import UsageMeter
from assay.schemas import EvaluationResult

__all__ = ["SelfConsistency"]


class SelfConsistency(LLMJudge):
    """``judge`` asked ``samples`` times per row; one result per key: the majority verdict
    (numbers without a label: the mean score), with ``confidence`` and the ``samples`` kept
    in its metadata. Samples that fail are left out and counted (``sample_errors``); when
    all fail, the result is the error."""

    def __init__(self, judge: LLMJudge, samples: int = 5, *, name: str | None = None) -> None:
        if samples < 2:
            raise ValueError(f"self-consistency needs samples >= 2, got {samples}")
        temperature = getattr(getattr(judge.chat.client, "config", None), "temperature", 1.0)
        if not temperature:
            raise ValueError(
                "self-consistency samples a judge at a temperature, but its model has "
                f"temperature={temperature!r}: every sample would be the same reply; pass "
                "model=ChatModel(..., temperature=0.7) (or similar) to the judge"
            )
        BaseEvaluator.__init__(self, name=name or judge.name)
        self.inner = judge
        self.samples = samples
        self.core = judge.core
        self.keys = judge.keys

    @property
    def result_keys(self) -> list[str]:
        return self.inner.result_keys

    def needs_reference(self) -> bool:
        return self.inner.needs_reference()

    async def judge(self, data: JudgeInput, meter: UsageMeter) -> list[EvaluationResult]:
        outcomes = await asyncio.gather(*(self._sample(index, data, meter) for index in range(self.samples)))
        judged = [results for results in outcomes if not isinstance(results, BaseException)]
        failed = [error for error in outcomes if isinstance(error, BaseException)]
        if not judged:
            raise failed[0]
        by_key: dict[str, list[EvaluationResult]] = {}
        for results in judged:
            for result in results:
                by_key.setdefault(result.key, []).append(result)
        return [_vote(results, len(failed)) for results in by_key.values()]

    async def _sample(
        self, index: int, data: JudgeInput, meter: UsageMeter
    ) -> list[EvaluationResult] | BaseException:
        with judge_sample(index):
            try:
                return await self.inner.judge(data, meter)
            except Exception as exc:  # one failed sample is counted, not the judgement's end
                return exc


def _vote(results: list[EvaluationResult], errors: int) -> EvaluationResult:
    labels = [_label(result) for result in results]
    counts = Counter(labels)
    top = max(counts.values())
    kept = next(label for label in labels if counts[label] == top)  # ties: the earliest sample
    chosen = results[labels.index(kept)].model_copy(deep=True)
    scores = [result.score for result in results if isinstance(result.score, (int, float))]
    if all(result.value is None for result in results) and len(scores) == len(results):
        chosen.score = sum(float(score) for score in scores) / len(scores)
    chosen.metadata = {
        **chosen.metadata,
        "confidence": top / len(results),
        "samples": labels,
        "sample_errors": errors,
    }
    return chosen


def _label(result: EvaluationResult) -> Any:
    return result.value if result.value is not None else result.score
