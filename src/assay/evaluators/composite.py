"""``CompositeEvaluator``: one metric from several sub-evaluators, by a business rule.

Sub-results keep their three outcomes (score, error, skipped). An errored or skipped
sub-result never counts as 0 or 1: ``all`` and ``any`` are decided only when the known
scores decide them (``all`` fails as soon as one sub fails; ``any`` passes as soon as one
passes); every other rule needs every sub-score, so the composite is an error (naming
the sub-evaluators that errored) or skipped (the target failed).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assay.evaluation.evaluator import BaseEvaluator, RowEvaluator, bind_row_evaluator, normalize_returned
from assay.schemas import EvaluationResult, EvaluationResults, Example, Run

__all__ = ["CompositeEvaluator", "outcome"]

Combine = str | Callable[[Sequence[EvaluationResult]], Any]
RULES = ("all", "any", "mean", "weighted", "min")


class CompositeEvaluator(BaseEvaluator):
    """Combine sub-evaluators' scores into one.

    Args:
        evaluators: anything ``evaluate()`` accepts as a row evaluator (functions with
            named parameters, ``BaseEvaluator`` objects, built-in names). Each may give
            several results; each result is one sub-score, named by its key.
        combine: ``"all"``, ``"any"``, ``"mean"``, ``"weighted"``, ``"min"``, or a function
            of the list of sub-results (called only when every one has a score) returning
            anything an evaluator may return (a number, a bool, a dict, a result).
        weights: for ``"weighted"``: ``{result key: weight}`` (every sub-result needs one).
        threshold: for ``"all"`` and ``"any"``, a sub-score passes when ``>= threshold``.
        store_sub_results: also return each sub-result as its own metric.
    """

    def __init__(
        self,
        evaluators: Sequence[Any],
        combine: Combine = "mean",
        *,
        weights: Mapping[str, float] | None = None,
        threshold: float = 1.0,
        name: str = "composite",
        store_sub_results: bool = False,
    ) -> None:
        super().__init__(name=name)
        if not evaluators:
            raise ValueError("CompositeEvaluator needs at least one sub-evaluator")
        if isinstance(combine, str) and combine not in RULES:
            raise ValueError(
                f"unknown combine rule {combine!r}; known: {', '.join(RULES)}, "
                "or a function of the sub-results"
            )
        if not isinstance(combine, str) and not callable(combine):
            raise TypeError(f"combine must be a rule name or a function, got {combine!r}")
        if combine == "weighted":
            _check_weights(weights)
        self.subs: list[RowEvaluator] = [bind_row_evaluator(e) for e in evaluators]
        self.combine = combine
        self.weights = dict(weights or {})
        self.threshold = float(threshold)
        self.store_sub_results = store_sub_results

    async def _aevaluate(self, run: Run, example: Example | None = None) -> Any:
        example = example if example is not None else Example(inputs=run.inputs or {})
        gathered = await asyncio.gather(*(_call(sub, run, example) for sub in self.subs))
        subs = [result for results in gathered for result in results]
        combined = self._combined(subs)
        combined.metadata = {
            **combined.metadata,
            "rule": self._rule_name(),
            "sub_results": [_summary(r) for r in subs],
        }
        if not self.store_sub_results:
            return combined
        return EvaluationResults(results=[combined, *subs])

    def _rule_name(self) -> str:
        if isinstance(self.combine, str):
            return self.combine
        return getattr(self.combine, "__name__", "callable")

    def _combined(self, subs: list[EvaluationResult]) -> EvaluationResult:
        scored = [r for r in subs if outcome(r) == "score"]
        missing = [r for r in subs if outcome(r) != "score"]
        if self.combine in ("all", "any"):
            decided = self._logical(scored, decide_early=bool(missing))
            if decided is not None:
                return decided
        if missing:
            return self._undecided(missing)
        if callable(self.combine):
            return self._from_callable(self.combine, subs)
        scores = [_score(r) for r in scored]
        if self.combine == "min":
            low = min(zip(scores, (r.key for r in scored)))
            return EvaluationResult(key=self.name, score=low[0], comment=f"lowest: {low[1]}")
        if self.combine == "weighted":
            return self._weighted(scored)
        return EvaluationResult(
            key=self.name, score=sum(scores) / len(scores), comment=f"mean of {len(scores)} sub-score(s)"
        )

    def _logical(self, scored: list[EvaluationResult], decide_early: bool) -> EvaluationResult | None:
        passing = [r.key for r in scored if _score(r) >= self.threshold]
        failing = [r.key for r in scored if r.key not in passing]
        if self.combine == "all":
            if failing:
                return EvaluationResult(
                    key=self.name,
                    score=False,
                    comment=f"failed: {', '.join(failing)}",
                    metadata={"decided_despite_missing": decide_early},
                )
            return (
                None
                if decide_early
                else EvaluationResult(key=self.name, score=True, comment=f"all {len(passing)} passed")
            )
        if passing:
            return EvaluationResult(
                key=self.name,
                score=True,
                comment=f"passed: {', '.join(passing)}",
                metadata={"decided_despite_missing": decide_early},
            )
        return (
            None
            if decide_early
            else EvaluationResult(key=self.name, score=False, comment=f"none of {len(failing)} passed")
        )

    def _undecided(self, missing: list[EvaluationResult]) -> EvaluationResult:
        errored = [r for r in missing if outcome(r) in ("error", "value")]
        if errored:
            named = "; ".join(f"{r.key}: {r.error or 'gave no score'}" for r in errored)
            return EvaluationResult(key=self.name, error=f"sub-evaluator(s) without a score: {named}")
        return EvaluationResult(
            key=self.name, metadata={"skipped": True}, comment="skipped: " + ", ".join(r.key for r in missing)
        )

    def _weighted(self, scored: list[EvaluationResult]) -> EvaluationResult:
        unweighted = [r.key for r in scored if r.key not in self.weights]
        if unweighted:
            raise ValueError(
                f"no weight for sub-result(s) {', '.join(unweighted)}; "
                f"weights given: {', '.join(self.weights) or 'none'}"
            )
        total = sum(self.weights[r.key] for r in scored)
        if total <= 0:
            raise ValueError("the weights of the sub-results sum to zero")
        score = sum(self.weights[r.key] * _score(r) for r in scored) / total
        return EvaluationResult(
            key=self.name, score=score, comment=f"weighted mean of {len(scored)} sub-score(s)"
        )

    def _from_callable(
        self, combine: Callable[[Sequence[EvaluationResult]], Any], subs: list[EvaluationResult]
    ) -> EvaluationResult:
        results = normalize_returned(combine(list(subs)), self.name)
        if len(results) != 1:
            raise ValueError(f"the combine function must give one result, gave {len(results)}")
        result = results[0]
        return result.model_copy(update={"key": self.name})


def outcome(result: EvaluationResult) -> str:
    """``score``, ``error``, ``skipped`` (the target failed) or ``value`` (no score)."""
    if result.error is not None:
        return "error"
    if result.score is not None:
        return "score"
    return "skipped" if result.metadata.get("skipped") is True else "value"


def _score(result: EvaluationResult) -> float:
    return float(result.score) if result.score is not None else math.nan


async def _call(sub: RowEvaluator, run: Run, example: Example) -> list[EvaluationResult]:
    if sub.is_async:
        return await sub.call_async(run, example)
    return await asyncio.to_thread(sub.call_sync, run, example)


def _summary(result: EvaluationResult) -> dict[str, Any]:
    shown: dict[str, Any] = {"key": result.key, "outcome": outcome(result)}
    for field in ("score", "value", "comment", "error"):
        value = getattr(result, field)
        if value is not None:
            shown[field] = value
    return shown


def _check_weights(weights: Mapping[str, float] | None) -> None:
    if not weights:
        raise ValueError('combine="weighted" needs weights={result key: weight}')
    for key, weight in weights.items():
        if not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight < 0:
            raise ValueError(f"weight of {key!r} must be a finite number >= 0, got {weight!r}")
