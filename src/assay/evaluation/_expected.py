"""One outcome per row and metric: an evaluator's answer with a key missing gets an error
result for that key, so no row silently lacks a metric (a service answering
``{"results": []}`` through an outage, a function returning ``[]`` or ``{}``).

Which keys an evaluator answers for: those it declares (``result_keys``, as the judges
do), else those it has answered with on earlier rows, else its own name. A declared key
missing from an answer is an error; an undeclared evaluator may vary its keys from row to
row, so only an answer with no result at all is one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.schemas import EvaluationResult, Run

__all__ = ["ExpectedKeys", "declared_keys"]


def declared_keys(evaluator: Any) -> tuple[str, ...] | None:
    """The keys ``evaluator`` says each answer holds (``result_keys``), or None."""
    keys = getattr(evaluator, "result_keys", None)
    if isinstance(keys, (list, tuple)) and keys and all(isinstance(k, str) for k in keys):
        return tuple(keys)
    return None


class ExpectedKeys:
    """What one evaluator's answers must hold; thread-safe (the learned keys only grow,
    each update a fresh frozenset)."""

    def __init__(self, name: str, declared: Sequence[str] | None = None) -> None:
        self.name = name
        self.declared = tuple(declared) if declared else None
        self._seen: frozenset[str] = frozenset()

    def complete(self, results: list[EvaluationResult], run: Run) -> list[EvaluationResult]:
        """``results`` with an error result added for each key it lacks."""
        if results and self.declared is None:
            for result in results:
                if result.key not in self._seen:
                    self._seen = self._seen | {result.key}
            return results
        if results:
            answered = {result.key for result in results}
            missing = [key for key in self.declared or () if key not in answered]
        else:
            missing = list(self.declared or sorted(self._seen) or (self.name,))
        if not missing:
            return results
        return [*results, *(self._missing(key, bool(results), run) for key in missing)]

    def _missing(self, key: str, answered: bool, run: Run) -> EvaluationResult:
        if answered:
            why = f"evaluator {self.name!r} gave no result for {key!r}, one of the keys it declares"
        else:
            why = f"evaluator {self.name!r} returned no result (an empty answer) for {key!r}"
        return EvaluationResult(key=key, error=why, metadata={"missing_result": True}, source_run_id=run.id)
