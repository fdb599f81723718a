"""Trajectory evaluators: the agent's tool calls against a reference, or judged by a model.

The agent's calls come from its ``@traceable(run_type="tool")`` child runs or, when it
has none, from OpenAI-style ``tool_calls`` in the chat messages of its outputs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assay.errors import EvaluatorInputError, TrajectoryError
from assay.evaluation.evaluator import BaseEvaluator
from assay.evaluators.agents._calls import ToolCall, calls_of_run, reference_calls
from assay.evaluators.agents._match import ArgRule, ArgumentRules, match_trajectory
from assay.evaluators.judge._base import JudgeInput, LLMJudge, verdict_score
from assay.evaluators.judge._text import check_template
from assay.evaluators.judge._verdicts import CriteriaVerdict
from assay.llm.resolve import JudgeModel
from assay.llm.usage import UsageMeter
from assay.schemas import EvaluationResult, Example, Run

__all__ = [
    "TRAJECTORY_PROMPT",
    "TrajectoryInput",
    "TrajectoryJudgeEvaluator",
    "TrajectoryMatchEvaluator",
    "render_trajectory",
]

SHOWN_CALLS = 50


class TrajectoryMatchEvaluator(BaseEvaluator):
    """Score 1 when the agent's tool calls match the reference trajectory, else 0.

    Args:
        mode: ``strict``, ``unordered``, ``subset`` or ``superset`` (see ``_match``).
        args: ``exact``, ``subset`` or ``ignore``: how arguments are compared.
        arg_rules: ``{tool: {argument: rule}}`` (``"*"`` for every tool).
        reference_key: where the reference is in ``example.outputs`` (a list of
            ``{"name", "args"}``, OpenAI tool calls, or chat messages with ``tool_calls``).
        source: ``auto``, ``runs`` (``tool`` child runs) or ``messages``.
        messages_key: where the chat messages are in ``run.outputs`` (default: found).
    """

    def __init__(
        self,
        mode: str = "strict",
        *,
        args: str = "exact",
        arg_rules: Mapping[str, Mapping[str, ArgRule]] | None = None,
        reference_key: str = "trajectory",
        source: str = "auto",
        messages_key: str | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(name=name or f"trajectory_{mode}_match")
        self.rules = ArgumentRules(args, dict(arg_rules or {}))
        match_trajectory([], [], mode, self.rules)  # an unknown mode fails here, not per row
        self.mode = mode
        self.reference_key = reference_key
        self.source = source
        self.messages_key = messages_key
        calls_of_run(Run(), source)  # so does an unknown source

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        reference = self._reference(example)
        try:
            actual = calls_of_run(run, self.source, self.messages_key)
        except TrajectoryError as exc:  # the agent's own output is malformed: a failure
            return EvaluationResult(key=self.name, score=0, comment=str(exc), metadata={"mode": self.mode})
        match = match_trajectory(actual, reference, self.mode, self.rules)
        return EvaluationResult(
            key=self.name,
            score=int(match.passed),
            comment=_comment(match, actual, reference),
            metadata={
                "mode": self.mode,
                "args": self.rules.args,
                "actual": [c.shown() for c in actual[:SHOWN_CALLS]],
                "reference": [c.shown() for c in reference[:SHOWN_CALLS]],
                "pairs": match.pairs,
                "unmatched_actual": match.unmatched_actual,
                "unmatched_reference": match.unmatched_reference,
                "first_mismatch": match.first_mismatch,
            },
        )

    def _reference(self, example: Example | None) -> list[ToolCall]:
        outputs = example.outputs if example is not None else None
        if not outputs or self.reference_key not in outputs:
            raise EvaluatorInputError(
                f"{type(self).__name__} needs example.outputs"
                f"[{self.reference_key!r}] (the reference trajectory)"
            )
        return reference_calls(outputs[self.reference_key], f"example.outputs[{self.reference_key!r}]")


def _comment(match: Any, actual: list[ToolCall], reference: list[ToolCall]) -> str:
    if match.passed:
        return f"{len(actual)} call(s) matched the reference"
    parts = []
    if match.first_mismatch is not None:
        at = match.first_mismatch
        got = _short(actual[at]) if at < len(actual) else "nothing"
        want = _short(reference[at]) if at < len(reference) else "nothing"
        parts.append(f"call {at}: got {got}, expected {want}")
    extra = [_short(actual[i]) for i in match.unmatched_actual[:5]]
    missing = [_short(reference[j]) for j in match.unmatched_reference[:5]]
    if extra and match.first_mismatch is None:
        parts.append("unexpected: " + "; ".join(extra))
    if missing and match.first_mismatch is None:
        parts.append("missing: " + "; ".join(missing))
    return "; ".join(parts) or "the trajectory does not match"


def _short(call: ToolCall) -> str:
    text = json.dumps(call.args, sort_keys=True, default=str)
    return f"{call.name}({text[:120]})"


TRAJECTORY_PROMPT = """You are judging the trajectory of an AI agent: the tools it called, in order, with their arguments and results, while working on a task.
[BEGIN DATA]
***
[Task]: {input}
***
[Trajectory]:
{trajectory}
***
[Final answer]: {output}
***
[END DATA]
Is this a reasonable trajectory for the task: does each call make progress, are the tools and arguments appropriate, with no needless or repeated calls, and does the final answer follow from the results? Reason step by step in "reasoning", then set "value" to "Y" if the trajectory is reasonable, or "N" if it is not."""


@dataclass(frozen=True)
class TrajectoryInput(JudgeInput):
    trajectory: str = ""
    calls: int = 0


class TrajectoryJudgeEvaluator(LLMJudge):
    """An LLM judge of the trajectory when there is no reference: score 1 (Y) or 0 (N),
    the judge's reasoning in ``comment``. ``prompt`` may use ``{input}``, ``{trajectory}``
    and ``{output}``. Tool calls that cannot be read are shown to the judge as such."""

    def __init__(
        self,
        model: JudgeModel = None,
        *,
        prompt: str | None = None,
        name: str = "trajectory_judge",
        source: str = "auto",
        messages_key: str | None = None,
    ) -> None:
        self.prompt = check_template(
            prompt or TRAJECTORY_PROMPT,
            required={"trajectory"},
            allowed={"input", "trajectory", "output"},
            owner=type(self).__name__,
        )
        calls_of_run(Run(), source)  # an unknown source fails here, not per row
        self.source = source
        self.messages_key = messages_key
        super().__init__(model, name=name)

    def judge_input(self, run: Run, example: Example | None) -> JudgeInput:
        data = super().judge_input(run, example)
        try:
            calls = calls_of_run(run, self.source, self.messages_key)
            trajectory = render_trajectory(calls) or "(no tool calls)"
        except TrajectoryError as exc:
            calls, trajectory = [], f"(the tool calls cannot be read: {exc})"
        return TrajectoryInput(data.input, data.output, None, trajectory, len(calls))

    async def judge(self, data: JudgeInput, meter: UsageMeter) -> list[EvaluationResult]:
        assert isinstance(data, TrajectoryInput)
        text = self.prompt.format(input=data.input, output=data.output, trajectory=data.trajectory)
        verdict = await self.chat.ask([{"role": "user", "content": text}], CriteriaVerdict, meter=meter)
        return [
            EvaluationResult(
                key=self.name,
                score=verdict_score(verdict.value),
                value=verdict.value,
                comment=verdict.reasoning,
                metadata={"calls": data.calls},
            )
        ]


def render_trajectory(calls: list[ToolCall]) -> str:
    lines = []
    for index, call in enumerate(calls, start=1):
        args = json.dumps(call.args, sort_keys=True, default=str, ensure_ascii=False)
        result = call.error if call.error else json.dumps(call.output, default=str, ensure_ascii=False)
        lines.append(f"{index}. {call.name}({args}) -> {result[:500]}")
    return "\n".join(lines)
