"""Scorers that extract items (claims, statements, opinions) and judge each one.

Step 1 (preprocess) lists the items, step 2 (analyze) gives one verdict per item; the score
is a fraction of verdicts times ``scale``, and 0 when there is no item.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from assay.errors import ReplyCheckError
from assay.evaluators.judge import AnyVerdicts, ExtractedItems, Verdicts
from assay.llm.usage import UsageMeter
from assay.scorers._base import TextLike
from assay.scorers._llm_base import JudgeScorerResult, LLMScorer, quoted


def numbered(items: list[str]) -> str:
    return "\n".join(f"{number}. {item}" for number, item in enumerate(items, 1))


class VerdictScorer(LLMScorer):
    """Subclasses set the prompts and ``fraction``; ``items_name`` names the items in reasons."""

    items_name = "claims"
    verdict_model: type[AnyVerdicts] = Verdicts

    async def score(self, input: TextLike, output: TextLike, meter: UsageMeter) -> JudgeScorerResult:
        items = await self.extract(input, output, meter)
        if items is not None and not items:
            return JudgeScorerResult(
                score=0.0,
                reason=f"Score 0: the output has no {self.items_name} to judge.",
                preprocess_step_result={self.items_name: []},
                analyze_step_result={"verdicts": []},
            )
        verdicts = await self.judge_items(input, output, items, meter)
        preprocess = {self.items_name: items} if items is not None else None
        analyze = {"verdicts": [v.model_dump() for v in verdicts]}
        if not verdicts:
            reason = f"Score 0: the output has no {self.items_name} to judge."
            return JudgeScorerResult(score=0.0, reason=reason, analyze_step_result=analyze)
        score = self.fraction(verdicts) * self.scale
        return JudgeScorerResult(
            score=score,
            reason=f"Score {score:.2f}: {self.explain(verdicts)}.",
            preprocess_step_result=preprocess,
            analyze_step_result=analyze,
        )

    async def extract(self, input: TextLike, output: TextLike, meter: UsageMeter) -> list[str] | None:
        """The items, or None for a one-step scorer that finds them while judging."""
        raise NotImplementedError

    async def judge_items(
        self, input: TextLike, output: TextLike, items: list[str] | None, meter: UsageMeter
    ) -> list[Any]:
        raise NotImplementedError

    async def ask_items(self, prompt: str, meter: UsageMeter) -> list[str]:
        reply = await self.core.ask(prompt, ExtractedItems, meter)
        return [item.strip() for item in reply.items if item.strip()]

    async def ask_verdicts(self, prompt: str, meter: UsageMeter, expected: int | None = None) -> list[Any]:
        def one_each(reply: AnyVerdicts) -> None:
            if expected is not None and len(reply.verdicts) != expected:
                raise ReplyCheckError(
                    f"{len(reply.verdicts)} verdicts for {expected} {self.items_name}; "
                    "give exactly one verdict per item, in order"
                )

        reply = await self.core.ask(prompt, self.verdict_model, meter, check=one_each)
        return list(reply.verdicts)

    def fraction(self, verdicts: list[Any]) -> float:
        raise NotImplementedError

    def explain(self, verdicts: list[Any]) -> str:
        counts = Counter(v.verdict for v in verdicts)
        tally = ", ".join(f"{counts[k]} {k}" for k in ("yes", "unsure", "no") if counts[k])
        return f"{tally} of {len(verdicts)} {self.items_name}"


def share(verdicts: list[Any], value: str) -> float:
    """The fraction of ``verdicts`` that are ``value``."""
    return sum(1 for v in verdicts if v.verdict == value) / len(verdicts)


def flagged(verdicts: list[Any], verdict: str) -> str:
    return quoted([v.item for v in verdicts if v.verdict == verdict])
