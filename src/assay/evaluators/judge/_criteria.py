"""Criteria judges: one criterion (or a joint set) per call, or several verdicts in one call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assay.evaluators.judge._base import DataKeys, JudgeInput, LLMJudge, verdict_score
from assay.evaluators.judge._prompts import (
    BUILTIN_CRITERIA,
    CRITERIA_PROMPT,
    FEEDBACK_PROMPT,
    FEEDBACK_REFERENCE_BLOCK,
    LABELED_CRITERIA_PROMPT,
)
from assay.evaluators.judge._text import check_template
from assay.evaluators.judge._verdicts import CriteriaVerdict, feedback_by_name, feedback_verdicts
from assay.llm.resolve import JudgeModel
from assay.llm.usage import UsageMeter
from assay.schemas import EvaluationResult

Criteria = str | Mapping[str, str] | Sequence[str | Mapping[str, str]]


def resolve_criteria(criteria: Criteria) -> dict[str, str]:
    """``{name: description}`` from a built-in name, a custom mapping, or a list of either."""
    items: list[str | Mapping[str, str]]
    items = [criteria] if isinstance(criteria, (str, Mapping)) else list(criteria)
    resolved: dict[str, str] = {}
    for item in items:
        if isinstance(item, str):
            if item not in BUILTIN_CRITERIA:
                raise ValueError(
                    f"unknown criterion {item!r}; built-in criteria are "
                    f"{', '.join(sorted(BUILTIN_CRITERIA))}, or pass {{name: description}}"
                )
            resolved[item] = BUILTIN_CRITERIA[item]
        elif isinstance(item, Mapping):
            for name, description in item.items():
                if not str(name).strip() or not str(description).strip():
                    raise ValueError("a custom criterion needs a non-empty name and description")
                resolved[str(name)] = str(description)
        else:
            raise TypeError(f"a criterion must be a name or a {{name: description}} mapping, got {item!r}")
    if not resolved:
        raise ValueError("no criteria given")
    return resolved


def describe_criteria(criteria: Mapping[str, str]) -> str:
    return "\n".join(f"{name}: {description}" for name, description in criteria.items())


class CriteriaEvaluator(LLMJudge):
    """Does the output meet the criterion? ``score`` 1 (Y) or 0 (N), ``value`` "Y"/"N",
    the judge's reasoning in ``comment``. The key is the criterion's name (``"criteria"``
    when several are judged jointly)."""

    default_criteria: Criteria = "helpfulness"
    default_prompt = CRITERIA_PROMPT
    placeholders = {"input", "output", "criteria"}

    def __init__(
        self,
        criteria: Criteria | None = None,
        model: JudgeModel = None,
        *,
        prompt: str | None = None,
        name: str | None = None,
        input_key: str | None = None,
        prediction_key: str | None = None,
        reference_key: str | None = None,
    ) -> None:
        self.criteria = resolve_criteria(criteria if criteria is not None else self.default_criteria)
        default_name = next(iter(self.criteria)) if len(self.criteria) == 1 else "criteria"
        self.prompt = check_template(
            prompt or self.default_prompt,
            required={"output", "criteria"},
            allowed=self.placeholders,
            owner=type(self).__name__,
        )
        super().__init__(
            model,
            name=name or default_name,
            keys=DataKeys(input_key, prediction_key, reference_key),
        )

    async def judge(self, data: JudgeInput, meter: UsageMeter) -> list[EvaluationResult]:
        text = self.prompt.format(
            input=data.input,
            output=data.output,
            criteria=describe_criteria(self.criteria),
            reference=data.reference or "",
        )
        verdict = await self.core.ask(text, CriteriaVerdict, meter)
        return [
            EvaluationResult(
                key=self.name,
                score=verdict_score(verdict.value),
                value=verdict.value,
                comment=verdict.reasoning,
                metadata={"criteria": dict(self.criteria)},
            )
        ]


class LabeledCriteriaEvaluator(CriteriaEvaluator):
    """``CriteriaEvaluator`` that also shows the judge the example's reference outputs."""

    default_criteria = "correctness"
    default_prompt = LABELED_CRITERIA_PROMPT
    placeholders = {"input", "output", "criteria", "reference"}

    def needs_reference(self) -> bool:
        return True


class LLMFeedbackEvaluator(LLMJudge):
    """Several criteria judged in one call; one result per criterion (key = its name)."""

    def __init__(
        self,
        criteria: Criteria,
        model: JudgeModel = None,
        *,
        use_reference: bool = False,
        prompt: str | None = None,
        name: str | None = None,
        input_key: str | None = None,
        prediction_key: str | None = None,
        reference_key: str | None = None,
    ) -> None:
        self.criteria = resolve_criteria(criteria)
        self._reply_schema = feedback_verdicts(list(self.criteria))  # one property per criterion
        self.use_reference = use_reference
        self.prompt = check_template(
            prompt or FEEDBACK_PROMPT,
            required={"output", "criteria"},
            allowed={"input", "output", "criteria", "reference_block"},
            owner="LLMFeedbackEvaluator",
        )
        super().__init__(
            model,
            name=name or "llm_feedback",
            keys=DataKeys(input_key, prediction_key, reference_key),
        )

    @property
    def result_keys(self) -> list[str]:
        return list(self.criteria)

    def needs_reference(self) -> bool:
        return self.use_reference

    async def judge(self, data: JudgeInput, meter: UsageMeter) -> list[EvaluationResult]:
        block = ""
        if self.use_reference:
            block = FEEDBACK_REFERENCE_BLOCK.format(reference=data.reference or "")
        text = self.prompt.format(
            input=data.input,
            output=data.output,
            criteria=describe_criteria(self.criteria),
            reference_block=block,
        )
        reply = await self.core.ask(text, self._reply_schema, meter)
        by_name = feedback_by_name(reply)
        return [
            EvaluationResult(
                key=name,
                score=verdict_score(by_name[name].value),
                value=by_name[name].value,
                comment=by_name[name].reasoning,
                metadata={"criterion": description},
            )
            for name, description in self.criteria.items()
        ]
