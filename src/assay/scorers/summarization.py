"""``create_summarization_scorer`` (Mastra's): alignment and coverage of a summary.

alignment = supported claims / claims; coverage = answered questions / questions;
score = min(alignment, coverage) x scale, and 0 when there is no claim or no question.
Three model calls: alignment (source + summary) and questions (source) run concurrently,
then coverage (questions + summary, never the source).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from assay.errors import ReplyCheckError
from assay.evaluators.judge import check_template
from assay.llm.resolve import JudgeModel
from assay.llm.usage import UsageMeter
from assay.scorers._base import TextLike
from assay.scorers._llm_base import JudgeScorerResult, LLMScorer, quoted, ratio
from assay.scorers._messages import first_user_text, last_assistant_text
from assay.scorers._summarization_prompts import (
    SUMMARY_ALIGNMENT_PROMPT,
    SUMMARY_COVERAGE_PROMPT,
    SUMMARY_QUESTIONS_PROMPT,
)

__all__ = [
    "SUMMARY_ALIGNMENT_PROMPT",
    "SUMMARY_COVERAGE_PROMPT",
    "SUMMARY_QUESTIONS_PROMPT",
    "SummarizationPrompts",
    "SummarizationScorer",
    "create_summarization_scorer",
]

SourceExtractor = Callable[[TextLike, TextLike], str]


class _Claim(BaseModel):
    claim: str
    reason: str
    supported: bool


class SummaryAlignment(BaseModel):
    claims: list[_Claim]


class SummaryQuestions(BaseModel):
    questions: list[str]


class _Answer(BaseModel):
    question: str
    reason: str
    answered: bool


class SummaryCoverage(BaseModel):
    answers: list[_Answer]


@dataclass(frozen=True)
class SummarizationPrompts:
    alignment: str = SUMMARY_ALIGNMENT_PROMPT
    questions: str = SUMMARY_QUESTIONS_PROMPT
    coverage: str = SUMMARY_COVERAGE_PROMPT

    def __post_init__(self) -> None:
        owner = "summarization scorer"
        check_template(
            self.alignment,
            required={"source", "summary"},
            allowed={"source", "summary"},
            owner=f"{owner} alignment",
        )
        check_template(
            self.questions,
            required={"source"},
            allowed={"source", "max_questions"},
            owner=f"{owner} questions",
        )
        # the coverage prompt may not see the source: that is the point of the step
        check_template(
            self.coverage,
            required={"summary", "questions"},
            allowed={"summary", "questions"},
            owner=f"{owner} coverage",
        )


class SummarizationScorer(LLMScorer):
    def __init__(
        self,
        model: JudgeModel = None,
        *,
        source: str | None = None,
        source_extractor: SourceExtractor | None = None,
        max_questions: int = 10,
        scale: float = 1.0,
        prompts: SummarizationPrompts = SummarizationPrompts(),
        name: str = "summarization",
    ) -> None:
        if max_questions < 1:
            raise ValueError(f"max_questions must be >= 1, got {max_questions}")
        super().__init__(model, name=name, scale=scale)
        self.source = source
        self.source_extractor = source_extractor
        self.max_questions = max_questions
        self.prompts = prompts

    def source_text(self, input: TextLike, output: TextLike) -> str:
        """``source_extractor`` first, then ``source``, then the first user message."""
        if self.source_extractor is not None:
            return str(self.source_extractor(input, output))
        if self.source is not None:
            return self.source
        return first_user_text(input)

    async def score(self, input: TextLike, output: TextLike, meter: UsageMeter) -> JudgeScorerResult:
        summary = last_assistant_text(output)
        source = self.source_text(input, output)
        if not source.strip():
            raise ValueError(
                "summarization scorer: no source text (no user message in the input); "
                "pass source= or source_extractor="
            )
        if not summary.strip():
            return JudgeScorerResult(score=0.0, reason="Score 0: the summary is empty.")
        alignment, questions = await asyncio.gather(
            self._alignment(source, summary, meter), self._questions(source, meter)
        )
        coverage = await self._coverage(questions, summary, meter) if questions else []
        return self._result(alignment, questions, coverage)

    async def _alignment(self, source: str, summary: str, meter: UsageMeter) -> list[_Claim]:
        text = self.prompts.alignment.format(source=source, summary=summary)
        reply = await self.core.ask(text, SummaryAlignment, meter)
        return reply.claims

    async def _questions(self, source: str, meter: UsageMeter) -> list[str]:
        text = self.prompts.questions.format(source=source, max_questions=self.max_questions)
        reply = await self.core.ask(text, SummaryQuestions, meter)
        questions = [q.strip() for q in reply.questions if q.strip()]
        return questions[: self.max_questions]

    async def _coverage(self, questions: list[str], summary: str, meter: UsageMeter) -> list[_Answer]:
        listed = "\n".join(f"{number}. {question}" for number, question in enumerate(questions, 1))
        text = self.prompts.coverage.format(summary=summary, questions=listed)

        def one_per_question(reply: SummaryCoverage) -> None:
            if len(reply.answers) != len(questions):
                raise ReplyCheckError(
                    f"{len(reply.answers)} answers for {len(questions)} questions; "
                    "give exactly one answer per question, in order"
                )

        reply = await self.core.ask(text, SummaryCoverage, meter, check=one_per_question)
        # the verdicts are matched by position; keep our own wording of each question
        return [answer.model_copy(update={"question": q}) for q, answer in zip(questions, reply.answers)]

    def _result(
        self, claims: list[_Claim], questions: list[str], answers: list[_Answer]
    ) -> JudgeScorerResult:
        preprocess = {
            "alignment": [{"claim": c.claim, "supported": c.supported, "reason": c.reason} for c in claims],
            "questions": questions,
        }
        analyze = {
            "coverage": [
                {"question": a.question, "answered": a.answered, "reason": a.reason} for a in answers
            ]
        }
        alignment = ratio(sum(c.supported for c in claims), len(claims))
        coverage = ratio(sum(a.answered for a in answers), len(questions))
        score = 0.0 if not claims or not questions else min(alignment, coverage) * self.scale
        return JudgeScorerResult(
            score=score,
            reason=self._reason(score, claims, questions, answers, alignment, coverage),
            preprocess_step_result=preprocess,
            analyze_step_result=analyze,
        )

    def _reason(
        self,
        score: float,
        claims: list[_Claim],
        questions: list[str],
        answers: list[_Answer],
        alignment: float,
        coverage: float,
    ) -> str:
        both = (
            f"alignment {alignment:.2f} ({sum(c.supported for c in claims)}/{len(claims)} claims "
            f"supported), coverage {coverage:.2f} ({sum(a.answered for a in answers)}/"
            f"{len(questions)} questions answered)"
        )
        if not claims:
            return f"Score 0 (alignment decides): the summary makes no checkable claim; {both}."
        if not questions:
            return f"Score 0 (coverage decides): the source yielded no question; {both}."
        unsupported = [c.claim for c in claims if not c.supported]
        unanswered = [a.question for a in answers if not a.answered]
        if alignment < coverage:
            detail = f"unsupported claims: {quoted(unsupported)}"
            decider = "alignment decides"
        elif coverage < alignment:
            detail = f"unanswered questions: {quoted(unanswered)}"
            decider = "coverage decides"
        else:
            decider = "alignment and coverage tie"
            parts = []
            if unsupported:
                parts.append(f"unsupported claims: {quoted(unsupported)}")
            if unanswered:
                parts.append(f"unanswered questions: {quoted(unanswered)}")
            detail = "; ".join(parts) or "every claim is supported and every question answered"
        return f"Score {score:.2f} ({decider}): {both}; {detail}."


def create_summarization_scorer(
    model: JudgeModel = None,
    source: str | None = None,
    source_extractor: SourceExtractor | None = None,
    max_questions: int = 10,
    scale: float = 1.0,
    *,
    prompts: SummarizationPrompts = SummarizationPrompts(),
    options: dict[str, Any] | None = None,
) -> SummarizationScorer:
    """The summarization scorer. ``model``: ``"openai/<model>"``, a ``ChatModel``, a ``ChatClient``,
    or None for ``ASSAY_JUDGE_MODEL``. The summary is the last assistant message of the
    output; the source is ``source_extractor(input, output)``, else ``source``, else the
    first user message of the input. ``options`` takes Mastra's form
    (``{"sourceExtractor", "source", "maxQuestions", "scale"}``, camelCase or snake_case)."""
    if options:
        given = _mastra_options(options)
        source = given.get("source", source)
        source_extractor = given.get("source_extractor", source_extractor)
        max_questions = given.get("max_questions", max_questions)
        scale = given.get("scale", scale)
    return SummarizationScorer(
        model,
        source=source,
        source_extractor=source_extractor,
        max_questions=max_questions,
        scale=scale,
        prompts=prompts,
    )


_MASTRA_OPTIONS = {
    "source": "source",
    "sourceExtractor": "source_extractor",
    "source_extractor": "source_extractor",
    "maxQuestions": "max_questions",
    "max_questions": "max_questions",
    "scale": "scale",
}


def _mastra_options(options: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(_MASTRA_OPTIONS))
    if unknown:
        raise TypeError(f"unknown summarization options {unknown}; known: {sorted(_MASTRA_OPTIONS)}")
    return {_MASTRA_OPTIONS[key]: value for key, value in options.items()}
