"""THE normalizer: whatever an evaluator returns becomes a list of EvaluationResults.

The return type carries the meaning: bool/number = score, str = value,
dict = fields, list / ``{"results": [...]}`` / EvaluationResults = several metrics.
Row and summary evaluators share it.
"""

from __future__ import annotations

import math
import numbers
import uuid
from collections.abc import Sequence
from typing import Any

from assay.errors import EvaluatorReturnError
from assay.schemas import EvaluationResult, EvaluationResults, Run, trusted_builder

# Declared metric metadata is read by the result itself (into ``evaluator_info``).
_RESULT_FIELDS = (frozenset(EvaluationResult.model_fields) | {"direction", "score_range"}) - {"key"}

# A checked score or str value: built per result, with nothing left to validate.
_scored_result = trusted_builder(EvaluationResult, ("key", "score", "value", "source_run_id"))


def normalize_returned(
    raw: Any, default_key: str, source_run_id: uuid.UUID | None = None
) -> list[EvaluationResult]:
    """``source_run_id`` is set on each result that does not name one itself."""
    kind = type(raw)
    if kind is bool or kind is int:  # the hot path: a plain score (3 stays 3, as in LangSmith)
        return [_scored_result(default_key, raw, None, source_run_id)]
    if kind is float:
        return [_scored_result(default_key, _finite(raw, default_key), None, source_run_id)]
    raw = _plain(raw)
    results = _normalize(raw, default_key)
    if source_run_id is not None:
        for result in results:
            if result.source_run_id is None:
                result.source_run_id = source_run_id
    return results


def _plain(value: Any) -> Any:
    """A NumPy scalar (``np.bool_``, ``np.float64``...) as the Python value it holds."""
    if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        return value.item()
    return value


def _normalize(raw: Any, default_key: str) -> list[EvaluationResult]:
    raw = _plain(raw)
    if isinstance(raw, EvaluationResult):
        score = raw.score
        if isinstance(score, float) and not math.isfinite(score):  # set after validation
            raise EvaluatorReturnError(f"evaluator {raw.key!r} returned a non-finite score ({score})")
        return [raw]
    if isinstance(raw, EvaluationResults):
        return list(raw.results)
    if isinstance(raw, dict):
        if not raw:  # {}: no result at all (the caller records the missing key)
            return []
        if "results" in raw and _is_sequence(raw["results"]):
            return _normalize_many(raw["results"], default_key)
        return [_from_dict(raw, default_key)]
    if _is_sequence(raw):
        return _normalize_many(raw, default_key)
    return [_from_scalar(raw, default_key, None)]


def _is_sequence(raw: Any) -> bool:
    return isinstance(raw, (list, tuple))


def _normalize_many(items: Any, default_key: str) -> list[EvaluationResult]:
    results: list[EvaluationResult] = []
    for item in items:
        if len(items) > 1 and isinstance(item, dict) and not (item.get("key") or item.get("name")):
            raise EvaluatorReturnError(
                f"evaluator {default_key!r} returned several results and one has no key ({item!r}); "
                'give each its own, e.g. {"key": "accuracy", "score": 1}'
            )
        if not isinstance(item, (dict, EvaluationResult)):
            raise EvaluatorReturnError(
                f"evaluator {default_key!r} returned a list holding {type(item).__name__}; "
                "each item of a list must be a dict or an EvaluationResult with its own key"
            )
        results.extend(_normalize(item, default_key))
    return results


def _from_scalar(raw: Any, key: str, run_id: uuid.UUID | None) -> EvaluationResult:
    kind = type(raw)
    if kind is bool or kind is int:  # 3 stays 3, as in LangSmith
        return _scored(key, raw, None, run_id)
    if kind is float:
        return _scored(key, _finite(raw, key), None, run_id)
    if isinstance(raw, bool):
        return _scored(key, bool(raw), None, run_id)
    if isinstance(raw, numbers.Integral):
        return _scored(key, int(raw), None, run_id)
    if isinstance(raw, numbers.Real):
        return _scored(key, _finite(float(raw), key), None, run_id)
    if isinstance(raw, str):
        return _scored(key, None, raw, run_id)
    raise EvaluatorReturnError(
        f"evaluator {key!r} returned {type(raw).__name__}; return a bool or number (a score), "
        "a str (a value), a dict, an EvaluationResult, or a list of them"
    )


def _scored(key: str, score: Any, value: Any, run_id: uuid.UUID | None) -> EvaluationResult:
    return _scored_result(key, score, value, run_id)


def _from_dict(raw: dict[str, Any], default_key: str) -> EvaluationResult:
    key = raw.get("key") or raw.get("name") or default_key
    fields = {k: v for k, v in raw.items() if k in _RESULT_FIELDS}
    extra = {k: v for k, v in raw.items() if k not in _RESULT_FIELDS and k not in ("key", "name")}
    if extra and not fields:
        raise EvaluatorReturnError(_unknown_fields_message(str(key), raw))
    if extra:
        fields["metadata"] = {**extra, **(fields.get("metadata") or {})}
    score = fields["score"] = _plain(fields.get("score"))
    kind = type(score)
    if kind is float:
        fields["score"] = _finite(score, str(key))
    elif kind is int or kind is bool or score is None or isinstance(score, bool):
        pass  # an integer stays one, as in LangSmith
    elif isinstance(score, numbers.Integral):
        fields["score"] = int(score)
    elif isinstance(score, numbers.Real):
        fields["score"] = _finite(float(score), str(key))
    else:
        raise EvaluatorReturnError(
            f"evaluator {key!r} returned score={score!r} ({type(score).__name__}); "
            "a score must be a bool or a number"
        )
    return EvaluationResult(key=str(key), **fields)


def _unknown_fields_message(key: str, raw: dict[str, Any]) -> str:
    """``{"accuracy": 5}``: a metric named as a field. Expected the key and score apart."""
    name, value = next(iter(raw.items()))
    return (
        f"evaluator {key!r} returned {raw!r}, a dict with no score, value or comment. "
        f"Expected a metric 'key' and a 'score', e.g. {{'key': {name!r}, 'score': {value!r}}}"
    )


def _finite(score: float, key: str) -> float:
    if not math.isfinite(score):
        raise EvaluatorReturnError(f"evaluator {key!r} returned a non-finite score ({score})")
    return score


# One outcome per row and metric.
#
# One outcome per row and metric: an evaluator's answer with a key missing gets an error
# result for that key, so no row silently lacks a metric (a service answering
# ``{"results": []}`` through an outage, a function returning ``[]`` or ``{}``).
#
# Which keys an evaluator answers for: those it declares (``result_keys``, as the judges
# do), else those it has answered with on earlier rows, else its own name. A declared key
# missing from an answer is an error; an undeclared evaluator may vary its keys from row to
# row, so only an answer with no result at all is one.


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

    def results_of(self, raw: Any, run: Run) -> list[EvaluationResult]:
        """What the evaluator's answer ``raw`` on ``run`` stands for: ``normalize_returned``,
        then ``complete``. A plain score (a bool, an int, a finite float) under a key this
        evaluator has answered with before, as most rows are, is made at once: the
        same one result the two steps make of it."""
        kind = type(raw)
        if (
            kind is bool or kind is int or (kind is float and math.isfinite(raw))
        ) and self.name in self._seen:
            return [_scored_result(self.name, raw, None, run.id)]
        return self.complete(normalize_returned(raw, self.name, run.id), run)

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
