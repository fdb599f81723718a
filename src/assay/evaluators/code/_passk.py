"""pass@k, the unbiased estimator of Chen et al. (2021): 1 - C(n-c, k) / C(n, k) per
example (n samples, c correct), averaged over examples."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from assay.evaluation import EvaluationResult


def pass_at_k_estimate(n: int, c: int, k: int) -> float:
    if not 0 <= c <= n or k < 1 or n < k:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n; got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_at_k(k: int, key: str = "CodeCorrectnessEvaluator") -> Callable[..., EvaluationResult]:
    """A summary evaluator: pass@k over the ``num_repetitions`` samples of each example.

    A sample passes when the result named ``key`` has score 1.0. Samples whose result is
    an error (the evaluator could not run) are left out of n; examples with fewer than
    k samples are left out of the mean and listed in the metadata.
    """
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    metric = f"pass@{k}"

    def summary(
        runs: Sequence[Any], examples: Sequence[Any], evaluation_results: Sequence[Sequence[EvaluationResult]]
    ) -> EvaluationResult:
        groups = _group(examples, evaluation_results, key)
        per_example, skipped = {}, {}
        for example_id, (n, c, errors) in groups.items():
            if n < k:
                skipped[example_id] = {"samples": n, "errored": errors}
                continue
            per_example[example_id] = {"n": n, "c": c, metric: pass_at_k_estimate(n, c, k)}
        metadata = {
            "k": k,
            "key": key,
            "per_example": per_example,
            "skipped": skipped,
            "examples": len(per_example),
        }
        if not per_example:
            most = max((n for n, _, _ in groups.values()), default=0)
            return EvaluationResult(
                key=metric,
                metadata=metadata,
                error=f"{metric} needs at least {k} scored samples of an example "
                f"(set num_repetitions >= {k}); the most any example has is {most}",
            )
        score = sum(v[metric] for v in per_example.values()) / len(per_example)
        return EvaluationResult(
            key=metric, score=score, metadata=metadata, comment=f"{metric} over {len(per_example)} example(s)"
        )

    summary.__name__ = f"pass_at_{k}"
    summary.__qualname__ = summary.__name__
    return summary


def _group(
    examples: Sequence[Any], evaluation_results: Sequence[Sequence[EvaluationResult]], key: str
) -> OrderedDict[str, tuple[int, int, int]]:
    """example id -> (scored samples, passing samples, errored samples)."""
    groups: OrderedDict[str, tuple[int, int, int]] = OrderedDict()
    for example, results in zip(examples, evaluation_results):
        example_id = str(getattr(example, "id", example))
        n, c, errors = groups.get(example_id, (0, 0, 0))
        result = _find(results, key)
        if result is None or result.numeric_score is None:
            groups[example_id] = (n, c, errors + 1)
            continue
        groups[example_id] = (n + 1, c + (result.numeric_score == 1.0), errors)
    return groups


def _find(results: Sequence[EvaluationResult], key: str) -> EvaluationResult | None:
    for result in results or ():
        if result.key == key:
            return result
    return None
