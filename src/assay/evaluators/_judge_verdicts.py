"""The reply schemas of the judges (sent as JSON schema, validated on return)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, field_validator


def _letter(value: Any, allowed: dict[str, str]) -> Any:
    """Accept what models write for a one-word verdict: case, quotes, trailing dots."""
    if isinstance(value, bool):
        return "Y" if value else "N"
    if isinstance(value, str):
        cleaned = value.strip().strip("\"'.` ").lower()
        return allowed.get(cleaned, value)
    return value


_YES_NO = {"y": "Y", "yes": "Y", "n": "N", "no": "N"}
_GRADES = {"correct": "CORRECT", "incorrect": "INCORRECT"}
_PREFERENCES = {"a": "A", "b": "B", "tie": "tie", "equal": "tie", "draw": "tie"}


class CriteriaVerdict(BaseModel):
    reasoning: str
    value: Literal["Y", "N"]

    @field_validator("value", mode="before")
    @classmethod
    def _normalize(cls, value: Any) -> Any:
        return _letter(value, _YES_NO)


class CriterionFeedback(BaseModel):
    criterion: str
    reasoning: str
    value: Literal["Y", "N"]

    @field_validator("value", mode="before")
    @classmethod
    def _normalize(cls, value: Any) -> Any:
        return _letter(value, _YES_NO)


class FeedbackVerdicts(BaseModel):
    verdicts: list[CriterionFeedback]


class QAGrade(BaseModel):
    grade: Literal["CORRECT", "INCORRECT"]

    @field_validator("grade", mode="before")
    @classmethod
    def _normalize(cls, value: Any) -> Any:
        return _letter(value, _GRADES)


class ReasonedQAGrade(BaseModel):
    reasoning: str
    grade: Literal["CORRECT", "INCORRECT"]

    @field_validator("grade", mode="before")
    @classmethod
    def _normalize(cls, value: Any) -> Any:
        return _letter(value, _GRADES)


class PairwisePreference(BaseModel):
    reasoning: str
    preference: Literal["A", "B", "tie"]

    @field_validator("preference", mode="before")
    @classmethod
    def _normalize(cls, value: Any) -> Any:
        return _letter(value, _PREFERENCES)
