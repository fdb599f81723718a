"""The pairwise judge: which of two outputs is better, shown in both orders by default.

A judge that prefers whatever comes first (or the longer answer) says so when asked twice
with the answers swapped: the two verdicts disagree. ``orders="both"`` asks both ways
(twice the calls, nothing more), keeps a verdict only when both orders agree and records
a tie otherwise, with ``position_consistent`` in the metadata; ``evaluate_comparative``'s
``bias()`` sums that up (consistency, tie rate, verbosity correlation).
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any, Literal

from assay.evaluators.judge._base import DataKeys, JudgeInput, LLMJudge
from assay.evaluators.judge._criteria import Criteria, describe_criteria, resolve_criteria
from assay.evaluators.judge._prompts import (
    PAIRWISE_DEFAULT_CRITERIA,
    PAIRWISE_PROMPT,
    PAIRWISE_REFERENCE_BLOCK,
)
from assay.evaluators.judge._text import check_template, render
from assay.evaluators.judge._verdicts import PairwisePreference
from assay.llm.resolve import JudgeModel
from assay.llm.usage import UsageMeter
from assay.schemas import EvaluationResult, Example, Run

_SCORES = {"first": (1.0, 0.0), "second": (0.0, 1.0), "tie": (0.5, 0.5)}
Orders = Literal["both", "random", "fixed"]
ORDERS = ("both", "random", "fixed")


@dataclass(frozen=True)
class PairwiseOutcome:
    """A judgement of ``(first, second)`` in the caller's order, whatever order was shown."""

    scores: tuple[float, float]
    preferred: str  # "first" | "second" | "tie"
    reasoning: str
    swapped: bool  # True: the judge saw the second output as answer A
    metadata: dict[str, Any] = field(default_factory=dict)


class ComparisonEvaluator(LLMJudge):
    """Pairwise preference between two outputs for the same input.

    In ``evaluate_comparative`` it judges every pair of experiments per example. As a row
    evaluator in ``evaluate(...)`` it compares the run's output with the example's reference
    output: score 1 when the run's output is preferred, 0.5 on a tie, 0 otherwise.

    ``orders``: ``"both"`` (default) shows the pair both ways and keeps the verdict only when
    the orders agree (a tie otherwise); ``"random"`` shows one order drawn at random (``seed``
    makes it reproducible), ``"fixed"`` the caller's order. The orders shown are recorded.
    """

    def __init__(
        self,
        model: JudgeModel = None,
        *,
        criteria: Criteria | None = None,
        prompt: str | None = None,
        name: str = "preference",
        orders: Orders = "both",
        randomize_order: bool | None = None,
        seed: int | None = None,
        input_key: str | None = None,
        prediction_key: str | None = None,
        reference_key: str | None = None,
    ) -> None:
        self.criteria_text = (
            describe_criteria(resolve_criteria(criteria))
            if criteria is not None
            else PAIRWISE_DEFAULT_CRITERIA
        )
        self.prompt = check_template(
            prompt or PAIRWISE_PROMPT,
            required={"answer_a", "answer_b"},
            allowed={"input", "answer_a", "answer_b", "criteria", "reference_block"},
            owner="ComparisonEvaluator",
        )
        if randomize_order is not None:  # the older switch between one random and one fixed order
            orders = "random" if randomize_order else "fixed"
        if orders not in ORDERS:
            raise ValueError(f"orders must be one of {', '.join(ORDERS)}, got {orders!r}")
        self.orders = orders
        self.seed = seed
        super().__init__(model, name=name, keys=DataKeys(input_key, prediction_key, reference_key))

    def draw_swap(self, order_key: str) -> bool:
        """Whether to show the second output first: a fair coin, per judgement.

        With a ``seed`` the coin is derived from the seed and ``order_key`` (the example and
        runs), so the same comparison is shown the same way whatever the scheduling, and a
        re-run hits the cache.
        """
        if self.orders != "random":
            return False
        if self.seed is None:
            return random.random() < 0.5
        return random.Random(f"{self.seed}:{order_key}").random() < 0.5

    async def compare(
        self,
        question: str,
        first: str,
        second: str,
        reference: str | None,
        meter: UsageMeter,
        order_key: str = "",
    ) -> PairwiseOutcome:
        if self.orders == "both":
            return await self._both_orders(question, first, second, reference, meter)
        swapped = self.draw_swap(order_key)
        preferred, presented, reasoning = await self._ask(question, first, second, reference, meter, swapped)
        return PairwiseOutcome(
            scores=_SCORES[preferred],
            preferred=preferred,
            reasoning=reasoning,
            swapped=swapped,
            metadata={"preference_as_presented": presented, "lengths": [len(first), len(second)]},
        )

    async def _both_orders(
        self, question: str, first: str, second: str, reference: str | None, meter: UsageMeter
    ) -> PairwiseOutcome:
        (kept, shown, why), (flipped, shown_swapped, why_swapped) = await asyncio.gather(
            self._ask(question, first, second, reference, meter, False),
            self._ask(question, first, second, reference, meter, True),
        )
        consistent = kept == flipped
        preferred = kept if consistent else "tie"
        return PairwiseOutcome(
            scores=_SCORES[preferred],
            preferred=preferred,
            reasoning=why if consistent else f"the orders disagree. As given: {why} Swapped: {why_swapped}",
            swapped=False,
            metadata={
                "orders": "both",
                "position_consistent": consistent,
                "verdicts": [kept, flipped],  # in the caller's terms, per order shown
                "preference_as_presented": [shown, shown_swapped],
                "lengths": [len(first), len(second)],
            },
        )

    async def _ask(
        self,
        question: str,
        first: str,
        second: str,
        reference: str | None,
        meter: UsageMeter,
        swapped: bool,
    ) -> tuple[str, str, str]:
        """(verdict in the caller's terms, verdict as presented, reasoning) for one order."""
        answer_a, answer_b = (second, first) if swapped else (first, second)
        block = PAIRWISE_REFERENCE_BLOCK.format(reference=reference) if reference else ""
        text = self.prompt.format(
            input=question,
            answer_a=answer_a,
            answer_b=answer_b,
            criteria=self.criteria_text,
            reference_block=block,
        )
        reply = await self.core.ask(text, PairwisePreference, meter)
        return _unswap(reply.preference, swapped), reply.preference, reply.reasoning

    async def compare_runs(
        self, runs: tuple[Run, Run], example: Example | None, meter: UsageMeter
    ) -> PairwiseOutcome:
        inputs = example.inputs if example is not None else runs[0].inputs
        outputs = []
        for run in runs:
            if run.outputs is None:
                raise ValueError(f"run {run.id} has no outputs to compare (error: {run.error})")
            outputs.append(render(run.outputs, self.keys.prediction, what="run outputs"))
        reference = None
        if example is not None and example.outputs:
            reference = render(example.outputs, self.keys.reference, what="reference outputs")
        order_key = ":".join([str(example.id) if example else "", *(str(r.id) for r in runs)])
        return await self.compare(
            render(inputs, self.keys.input, what="inputs"),
            outputs[0],
            outputs[1],
            reference,
            meter,
            order_key,
        )

    async def judge(self, data: JudgeInput, meter: UsageMeter) -> list[EvaluationResult]:
        # As a row evaluator: the run's output (first) against the reference output (second).
        outcome = await self.compare(
            data.input, data.output, data.reference or "", None, meter, order_key=data.output
        )
        return [
            EvaluationResult(
                key=self.name,
                score=outcome.scores[0],
                value=outcome.preferred,
                comment=outcome.reasoning,
                metadata={
                    "swapped": outcome.swapped,
                    **outcome.metadata,
                    "compared_with": "reference outputs",
                },
            )
        ]

    def needs_reference(self) -> bool:
        return True


def _unswap(preference: str, swapped: bool) -> str:
    if preference == "tie":
        return "tie"
    first_won = (preference == "A") != swapped
    return "first" if first_won else "second"
