"""The reply schemas of every judge, evaluator or scorer (sent as JSON schema, validated on return)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, field_validator


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


class FeedbackVerdicts(BaseModel):
    verdicts: list[CriterionFeedback]


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
