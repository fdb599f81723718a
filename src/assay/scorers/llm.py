"""Mastra's LLM scorers: faithfulness, hallucination, answer relevancy, toxicity, bias.

Each factory returns a scorer whose ``.run(input=..., output=...)`` gives ``score``,
``reason``, ``preprocess_step_result`` (the extracted items) and ``analyze_step_result``
(one verdict per item), and which also works as an evaluator in ``evaluate(...)``.
Faithfulness and answer relevancy: higher is better. Hallucination, toxicity and bias:
higher is worse (the share of offending items), as in Mastra.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from assay.evaluators.judge import YesNoVerdicts, check_template
from assay.llm.resolve import JudgeModel
from assay.llm.usage import UsageMeter
from assay.scorers._base import TextLike
from assay.scorers._llm_prompts import (
    BIAS_VERDICTS_PROMPT,
    CLAIMS_PROMPT,
    FAITHFULNESS_VERDICTS_PROMPT,
    HALLUCINATION_VERDICTS_PROMPT,
    OPINIONS_PROMPT,
    RELEVANCY_VERDICTS_PROMPT,
    STATEMENTS_PROMPT,
    TOXICITY_PROMPT,
)
from assay.scorers._messages import context_from, first_user_text, last_assistant_text
from assay.scorers._verdicts import VerdictScorer, flagged, numbered, share

__all__ = [
    "BIAS_VERDICTS_PROMPT",
    "CLAIMS_PROMPT",
    "FAITHFULNESS_VERDICTS_PROMPT",
    "HALLUCINATION_VERDICTS_PROMPT",
    "OPINIONS_PROMPT",
    "RELEVANCY_VERDICTS_PROMPT",
    "STATEMENTS_PROMPT",
    "TOXICITY_PROMPT",
    "StepPrompts",
    "create_answer_relevancy_scorer",
    "create_bias_scorer",
    "create_faithfulness_scorer",
    "create_hallucination_scorer",
    "create_toxicity_scorer",
]

ContextExtractor = Callable[[TextLike, TextLike], Sequence[str]]


@dataclass(frozen=True)
class StepPrompts:
    """The two prompts of an extract-then-judge scorer (``extract`` unused by toxicity)."""

    extract: str
    judge: str


class _ContextScorer(VerdictScorer):
    """Claims of the output judged against a context (faithfulness, hallucination)."""

    def __init__(
        self,
        model: JudgeModel,
        *,
        name: str,
        prompts: StepPrompts,
        scale: float,
        context: Sequence[str] | None,
        context_extractor: ContextExtractor | None,
    ) -> None:
        super().__init__(model, name=name, scale=scale)
        self.prompts = _checked(prompts, name, judge_fields={"context", "items"})
        self.context = list(context) if context is not None else None
        self.context_extractor = context_extractor

    def context_text(self, input: TextLike, output: TextLike) -> str:
        """``context_extractor`` first, then ``context``, then ``input["context"]``."""
        if self.context_extractor is not None:
            found: list[str] | None = [str(c) for c in self.context_extractor(input, output)]
        elif self.context is not None:
            found = self.context
        else:
            found = context_from(input)
        if not found:
            raise ValueError(
                f"{self.name} scorer: no context to judge against; pass context=[...], "
                "context_extractor=, or give the example a 'context' input"
            )
        return "\n\n".join(found)

    async def extract(self, input: TextLike, output: TextLike, meter: UsageMeter) -> list[str]:
        self.context_text(input, output)  # fail on a missing context before any call
        text = self.prompts.extract.format(output=last_assistant_text(output))
        return await self.ask_items(text, meter)

    async def judge_items(
        self, input: TextLike, output: TextLike, items: list[str] | None, meter: UsageMeter
    ) -> list[Any]:
        assert items is not None
        text = self.prompts.judge.format(context=self.context_text(input, output), items=numbered(items))
        return await self.ask_verdicts(text, meter, expected=len(items))


class FaithfulnessScorer(_ContextScorer):
    def fraction(self, verdicts: list[Any]) -> float:
        return share(verdicts, "yes")

    def explain(self, verdicts: list[Any]) -> str:
        supported = sum(v.verdict == "yes" for v in verdicts)
        text = f"{supported} of {len(verdicts)} claims are supported by the context"
        if supported < len(verdicts):
            text += f"; not supported: {flagged(verdicts, 'no') or flagged(verdicts, 'unsure')}"
        return text


class HallucinationScorer(_ContextScorer):
    direction = "lower"  # the share of claims that contradict the context
    verdict_model = YesNoVerdicts

    def fraction(self, verdicts: list[Any]) -> float:
        return share(verdicts, "yes")

    def explain(self, verdicts: list[Any]) -> str:
        bad = sum(v.verdict == "yes" for v in verdicts)
        text = f"{bad} of {len(verdicts)} claims are hallucinated"
        return text + (f": {flagged(verdicts, 'yes')}" if bad else "")


class AnswerRelevancyScorer(VerdictScorer):
    items_name = "statements"

    def __init__(
        self, model: JudgeModel, *, prompts: StepPrompts, scale: float, uncertainty_weight: float
    ) -> None:
        super().__init__(model, name="answer_relevancy", scale=scale)
        if not 0 <= uncertainty_weight <= 1:
            raise ValueError(f"uncertainty_weight must be within [0, 1], got {uncertainty_weight}")
        self.prompts = _checked(prompts, self.name, judge_fields={"input", "items"})
        self.uncertainty_weight = uncertainty_weight

    async def extract(self, input: TextLike, output: TextLike, meter: UsageMeter) -> list[str]:
        return await self.ask_items(self.prompts.extract.format(output=last_assistant_text(output)), meter)

    async def judge_items(
        self, input: TextLike, output: TextLike, items: list[str] | None, meter: UsageMeter
    ) -> list[Any]:
        assert items is not None
        text = self.prompts.judge.format(input=first_user_text(input), items=numbered(items))
        return await self.ask_verdicts(text, meter, expected=len(items))

    def fraction(self, verdicts: list[Any]) -> float:
        return share(verdicts, "yes") + self.uncertainty_weight * share(verdicts, "unsure")

    def explain(self, verdicts: list[Any]) -> str:
        text = super().explain(verdicts).replace("yes", "relevant").replace("no ", "irrelevant ")
        irrelevant = flagged(verdicts, "no")
        return text + (f"; irrelevant: {irrelevant}" if irrelevant else "")


class ToxicityScorer(VerdictScorer):
    direction = "lower"  # a share of toxic statements / biased opinions
    items_name = "statements"
    verdict_model = YesNoVerdicts

    def __init__(self, model: JudgeModel, *, prompt: str, scale: float) -> None:
        super().__init__(model, name="toxicity", scale=scale)
        self.prompt = check_template(
            prompt, required={"output"}, allowed={"input", "output"}, owner="toxicity scorer"
        )

    async def extract(self, input: TextLike, output: TextLike, meter: UsageMeter) -> None:
        return None  # one call finds and judges the statements

    async def judge_items(
        self, input: TextLike, output: TextLike, items: list[str] | None, meter: UsageMeter
    ) -> list[Any]:
        text = self.prompt.format(input=first_user_text(input), output=last_assistant_text(output))
        return await self.ask_verdicts(text, meter)

    def fraction(self, verdicts: list[Any]) -> float:
        return share(verdicts, "yes")

    def explain(self, verdicts: list[Any]) -> str:
        bad = sum(v.verdict == "yes" for v in verdicts)
        return f"{bad} of {len(verdicts)} statements are toxic" + (
            f": {flagged(verdicts, 'yes')}" if bad else ""
        )


class BiasScorer(VerdictScorer):
    direction = "lower"  # a share of toxic statements / biased opinions
    items_name = "opinions"
    verdict_model = YesNoVerdicts

    def __init__(self, model: JudgeModel, *, prompts: StepPrompts, scale: float) -> None:
        super().__init__(model, name="bias", scale=scale)
        self.prompts = _checked(prompts, self.name, judge_fields={"items"})

    async def extract(self, input: TextLike, output: TextLike, meter: UsageMeter) -> list[str]:
        return await self.ask_items(self.prompts.extract.format(output=last_assistant_text(output)), meter)

    async def judge_items(
        self, input: TextLike, output: TextLike, items: list[str] | None, meter: UsageMeter
    ) -> list[Any]:
        assert items is not None
        return await self.ask_verdicts(
            self.prompts.judge.format(items=numbered(items)), meter, expected=len(items)
        )

    def fraction(self, verdicts: list[Any]) -> float:
        return share(verdicts, "yes")

    def explain(self, verdicts: list[Any]) -> str:
        bad = sum(v.verdict == "yes" for v in verdicts)
        return f"{bad} of {len(verdicts)} opinions are biased" + (
            f": {flagged(verdicts, 'yes')}" if bad else ""
        )


def _checked(prompts: StepPrompts, owner: str, judge_fields: set[str]) -> StepPrompts:
    check_template(prompts.extract, required={"output"}, allowed={"output"}, owner=f"{owner} extract")
    check_template(prompts.judge, required=judge_fields, allowed=judge_fields, owner=f"{owner} judge")
    return prompts


def create_faithfulness_scorer(
    model: JudgeModel = None,
    context: Sequence[str] | None = None,
    scale: float = 1.0,
    *,
    context_extractor: ContextExtractor | None = None,
    prompts: StepPrompts = StepPrompts(CLAIMS_PROMPT, FAITHFULNESS_VERDICTS_PROMPT),
) -> FaithfulnessScorer:
    """Share of the output's claims that the context supports (x ``scale``); 0 with no claim."""
    return FaithfulnessScorer(
        model,
        name="faithfulness",
        prompts=prompts,
        scale=scale,
        context=context,
        context_extractor=context_extractor,
    )


def create_hallucination_scorer(
    model: JudgeModel = None,
    context: Sequence[str] | None = None,
    scale: float = 1.0,
    *,
    context_extractor: ContextExtractor | None = None,
    prompts: StepPrompts = StepPrompts(CLAIMS_PROMPT, HALLUCINATION_VERDICTS_PROMPT),
) -> HallucinationScorer:
    """Share of the output's claims that contradict or go beyond the context (lower is better)."""
    return HallucinationScorer(
        model,
        name="hallucination",
        prompts=prompts,
        scale=scale,
        context=context,
        context_extractor=context_extractor,
    )


def create_answer_relevancy_scorer(
    model: JudgeModel = None,
    uncertainty_weight: float = 0.3,
    scale: float = 1.0,
    *,
    prompts: StepPrompts = StepPrompts(STATEMENTS_PROMPT, RELEVANCY_VERDICTS_PROMPT),
) -> AnswerRelevancyScorer:
    """(relevant + uncertainty_weight x unsure) / statements, x ``scale``; 0 with no statement."""
    return AnswerRelevancyScorer(model, prompts=prompts, scale=scale, uncertainty_weight=uncertainty_weight)


def create_toxicity_scorer(
    model: JudgeModel = None, scale: float = 1.0, *, prompt: str = TOXICITY_PROMPT
) -> ToxicityScorer:
    """Share of the output's statements judged toxic (lower is better); one model call."""
    return ToxicityScorer(model, prompt=prompt, scale=scale)


def create_bias_scorer(
    model: JudgeModel = None,
    scale: float = 1.0,
    *,
    prompts: StepPrompts = StepPrompts(OPINIONS_PROMPT, BIAS_VERDICTS_PROMPT),
) -> BiasScorer:
    """Share of the output's opinions judged biased (lower is better); 0 with no opinion."""
    return BiasScorer(model, prompts=prompts, scale=scale)
