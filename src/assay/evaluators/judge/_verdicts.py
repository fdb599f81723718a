"""The reply schemas of every judge, evaluator or scorer (sent as JSON schema, validated on return)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, create_model, field_validator


def _letter(value: Any, allowed: dict[str, str]) -> Any:
    """Accept what models write for a one-word verdict: case, quotes, trailing dots."""
    if isinstance(value, bool):
        return "Y" if value else "N"
    if isinstance(value, str):
        cleaned = value.strip().strip("\"'.` ").lower()
        return allowed.get(cleaned, value)
    return value


def _tolerant(allowed: dict[str, str]) -> BeforeValidator:
    return BeforeValidator(lambda value: _letter(value, allowed))


YesNo = Annotated[Literal["Y", "N"], _tolerant({"y": "Y", "yes": "Y", "n": "N", "no": "N"})]
Grade = Annotated[
    Literal["CORRECT", "INCORRECT"], _tolerant({"correct": "CORRECT", "incorrect": "INCORRECT"})
]
Preference = Annotated[
    Literal["A", "B", "tie"], _tolerant({"a": "A", "b": "B", "tie": "tie", "equal": "tie", "draw": "tie"})
]


class CriteriaVerdict(BaseModel):
    reasoning: str
    value: YesNo


class CriterionFeedback(BaseModel):
    criterion: str
    reasoning: str
    value: YesNo


def feedback_verdicts(criteria: Sequence[str]) -> type[BaseModel]:
    """The reply of one ``LLMFeedbackEvaluator``: ``{"verdicts": {<criterion>: {"reasoning",
    "value"}}}`` with one required property per criterion, so a model that follows the
    schema (structured output, constrained decoding, the loopback server's default reply)
    cannot skip one. The list form of earlier prompts, ``[{"criterion", "reasoning",
    "value"}]``, is read too."""
    names = list(criteria)
    by_name = create_model(  # type: ignore[call-overload]
        "CriterionVerdicts",
        **{f"c{i}": (CriteriaVerdict, Field(alias=name)) for i, name in enumerate(names)},
    )

    def from_list(value: Any) -> Any:
        if not isinstance(value, list):
            return value
        given = {
            str(item["criterion"]).strip(): item
            for item in value
            if isinstance(item, dict) and "criterion" in item
        }
        missing = [name for name in names if name not in given]
        if missing:
            raise ValueError(f"no verdict for criteria {missing}; give one per criterion")
        return given

    model: type[BaseModel] = create_model(
        "FeedbackVerdicts", verdicts=(Annotated[by_name, BeforeValidator(from_list)], ...)
    )
    return model


def feedback_by_name(reply: BaseModel) -> dict[str, CriteriaVerdict]:
    """``{criterion: verdict}`` of a :func:`feedback_verdicts` reply."""
    verdicts = reply.verdicts  # type: ignore[attr-defined]
    return {
        (field.alias or name): getattr(verdicts, name) for name, field in type(verdicts).model_fields.items()
    }


class QAGrade(BaseModel):
    grade: Grade


class ReasonedQAGrade(BaseModel):
    reasoning: str
    grade: Grade


class PairwisePreference(BaseModel):
    reasoning: str
    preference: Preference


# Scorers that extract items (claims, statements, opinions) and judge each one.
class ExtractedItems(BaseModel):
    items: list[str]


def _lower(value: Any) -> Any:
    return value.strip().strip("\"'.").lower() if isinstance(value, str) else value


class Verdict(BaseModel):
    item: str
    reason: str
    verdict: Literal["yes", "no", "unsure"]

    @field_validator("verdict", mode="before")
    @classmethod
    def _normalize(cls, value: Any) -> Any:
        return _lower(value)


class Verdicts(BaseModel):
    verdicts: list[Verdict]


class YesNoVerdict(BaseModel):
    item: str
    reason: str
    verdict: Literal["yes", "no"]

    @field_validator("verdict", mode="before")
    @classmethod
    def _normalize(cls, value: Any) -> Any:
        return _lower(value)


class YesNoVerdicts(BaseModel):
    verdicts: list[YesNoVerdict]


AnyVerdicts = Verdicts | YesNoVerdicts
