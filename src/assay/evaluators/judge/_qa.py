"""Question-answering judges: "qa" (against the reference answer), "context_qa" (against the
reference as context) and "cot_qa" (context QA, reasoning first)."""

from __future__ import annotations

from typing import Literal

from assay.evaluators.judge._base import DataKeys, JudgeInput, LLMJudge
from assay.evaluators.judge._prompts import CONTEXT_QA_PROMPT, COT_QA_PROMPT, QA_PROMPT
from assay.evaluators.judge._text import check_template
from assay.evaluators.judge._verdicts import QAGrade, ReasonedQAGrade
from assay.llm.resolve import JudgeModel
from assay.llm.usage import UsageMeter
from assay.schemas import EvaluationResult

QAMode = Literal["qa", "context_qa", "cot_qa"]

_PROMPTS: dict[str, str] = {"qa": QA_PROMPT, "context_qa": CONTEXT_QA_PROMPT, "cot_qa": COT_QA_PROMPT}


class QAEvaluator(LLMJudge):
    """Is the answer correct? ``score`` 1 (CORRECT) or 0 (INCORRECT), ``value`` the grade.

    The question is the example's inputs, the answer the run's outputs, and the reference
    (the true answer for "qa", the context for "context_qa" and "cot_qa") the example's
    outputs; pick keys with ``input_key``, ``prediction_key`` and ``reference_key``.
    """

    def __init__(
        self,
        mode: QAMode = "qa",
        model: JudgeModel = None,
        *,
        prompt: str | None = None,
        name: str | None = None,
        input_key: str | None = None,
        prediction_key: str | None = None,
        reference_key: str | None = None,
    ) -> None:
        if mode not in _PROMPTS:
            raise ValueError(f"QAEvaluator mode must be one of {sorted(_PROMPTS)}, got {mode!r}")
        self.mode = mode
        self.prompt = check_template(
            prompt or _PROMPTS[mode],
            required={"input", "output", "reference"},
            allowed={"input", "output", "reference"},
            owner=f"QAEvaluator({mode!r})",
        )
        super().__init__(model, name=name or mode, keys=DataKeys(input_key, prediction_key, reference_key))

    def needs_reference(self) -> bool:
        return True

    async def judge(self, data: JudgeInput, meter: UsageMeter) -> list[EvaluationResult]:
        text = self.prompt.format(input=data.input, output=data.output, reference=data.reference)
        reply: QAGrade | ReasonedQAGrade
        if self.mode == "cot_qa":
            reply = await self.core.ask(text, ReasonedQAGrade, meter)
        else:
            reply = await self.core.ask(text, QAGrade, meter)
        return [
            EvaluationResult(
                key=self.name,
                score=1 if reply.grade == "CORRECT" else 0,
                value=reply.grade,
                comment=getattr(reply, "reasoning", None),
            )
        ]


def qa_evaluator() -> QAEvaluator:
    """``"qa"`` by name: the answer graded against the reference answer, on the default model."""
    return QAEvaluator("qa")


def cot_qa_evaluator() -> QAEvaluator:
    """``"cot_qa"`` by name: chain-of-thought grading against the reference, default model."""
    return QAEvaluator("cot_qa")


def context_qa_evaluator() -> QAEvaluator:
    """``"context_qa"`` by name: the answer graded against the reference as context."""
    return QAEvaluator("context_qa")
