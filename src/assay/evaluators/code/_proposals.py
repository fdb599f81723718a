"""Where generated inputs come from: a judge model (structured output) or Hypothesis
strategies drawn from the reference's typed signature (no model)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from assay._aio import run_coroutine
from assay.errors import ReplyCheckError, require_extra
from assay.llm import UsageMeter
from assay.llm.resolve import JudgeModel, resolve_structured

__all__ = ["Proposal", "ask_model", "draw_property_cases"]

NO_EXPECTED = object()  # the model's expected output is absent (or we never ask for it)


@dataclass(frozen=True)
class Proposal:
    """One proposed call: its arguments, and (from a model only) its claimed output."""

    args: list[Any]
    claimed: Any = NO_EXPECTED


class ProposedCase(BaseModel):
    arguments: str = Field(description="a JSON array: the function's positional arguments, in order")
    expected_output: str = Field(description="the JSON value the correct function returns for them")
    purpose: str = Field(description="what this case tests, in a few words")


class ProposedCases(BaseModel):
    cases: list[ProposedCase]


SYSTEM = (
    "You write test inputs for a function. Cover ordinary inputs, edge cases (empty, zero, "
    "negative, one element, duplicates, boundaries) and tricky ones. Arguments and outputs are "
    "JSON values. Keep inputs small enough to run in well under a second."
)


def ask_model(model: JudgeModel, problem: str, signature: str, n: int) -> list[Proposal]:
    """``n`` cases proposed by the judge model; a reply whose arguments are not JSON
    arrays is sent back to the model with the problem (the structured layer retries)."""
    structured = resolve_structured(model)
    messages = [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": f"Problem:\n{problem}\n\nFunction: {signature}\n\nWrite {n} distinct test cases.",
        },
    ]
    reply = run_coroutine(structured.ask(messages, ProposedCases, meter=UsageMeter(), check=_check))
    return [_proposal(case) for case in reply.cases[:n]]


def _check(reply: ProposedCases) -> None:
    if not reply.cases:
        raise ReplyCheckError("the reply has no cases")
    for index, case in enumerate(reply.cases):
        try:
            arguments = json.loads(case.arguments)
            json.loads(case.expected_output)
        except ValueError as exc:
            raise ReplyCheckError(f"case {index}: not valid JSON ({exc})") from None
        if not isinstance(arguments, list):
            raise ReplyCheckError(f"case {index}: 'arguments' must be a JSON array of the arguments")


def _proposal(case: ProposedCase) -> Proposal:
    return Proposal(json.loads(case.arguments), json.loads(case.expected_output))


def draw_property_cases(strategies: Sequence[Any], n: int, seed: int) -> list[Proposal]:
    """``n`` distinct argument tuples drawn by Hypothesis, the same ones for the same
    ``seed`` (so a re-run proposes the same cases)."""
    require_extra("hypothesis", "code", feature="property-based test cases")
    import hypothesis
    from hypothesis import strategies as st

    drawn: list[list[Any]] = []
    seen: set[str] = set()

    @hypothesis.settings(
        max_examples=max(4 * n, 20),
        database=None,
        deadline=None,
        phases=[hypothesis.Phase.generate],
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    @hypothesis.seed(seed)
    @hypothesis.given(st.tuples(*strategies))
    def collect(args: tuple[Any, ...]) -> None:
        fingerprint = repr(args)
        if len(drawn) < n and fingerprint not in seen:
            seen.add(fingerprint)
            drawn.append(list(args))

    collect()
    return [Proposal(args) for args in drawn]
