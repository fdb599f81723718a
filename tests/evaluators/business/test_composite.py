"""CompositeEvaluator: every rule, the three outcomes of sub-results, and evaluate()."""

from __future__ import annotations

from typing import Any

import pytest

import assay
from assay.evaluation import BaseEvaluator
from assay.evaluators import CompositeEvaluator
from assay.schemas import EvaluationResult, Example, Run

RUN = Run(inputs={"q": "x"}, outputs={"answer": "yes"})
EXAMPLE = Example(inputs={"q": "x"}, outputs={"answer": "yes"})


def scored(key: str, score: Any) -> Any:
    def evaluator(outputs: dict[str, Any]) -> EvaluationResult:
        return EvaluationResult(key=key, score=score)

    evaluator.__name__ = key
    return evaluator


def broken(outputs: dict[str, Any]) -> float:
    raise RuntimeError("the judge is down")


def skipped(outputs: dict[str, Any]) -> EvaluationResult:
    return EvaluationResult(key="skipped_one", metadata={"skipped": True})


def composite_of(*subs: Any, **kwargs: Any) -> EvaluationResult:
    result = CompositeEvaluator(list(subs), **kwargs).evaluate(RUN, EXAMPLE)
    assert isinstance(result, EvaluationResult), result
    return result


@pytest.mark.parametrize(
    ("rule", "scores", "expected"),
    [
        ("all", [1, 1, True], 1),
        ("all", [1, 0, 1], 0),
        ("any", [0, 0, 1], 1),
        ("any", [0, False, 0], 0),
        ("mean", [1, 0, 0.5], 0.5),
        ("min", [0.9, 0.2, 0.7], 0.2),
    ],
)
def test_each_rule_on_plain_scores(rule: str, scores: list[Any], expected: float) -> None:
    subs = [scored(f"m{i}", s) for i, s in enumerate(scores)]
    result = composite_of(*subs, combine=rule)
    assert result.error is None and float(result.score) == pytest.approx(expected)  # type: ignore[arg-type]
    assert [s["key"] for s in result.metadata["sub_results"]] == ["m0", "m1", "m2"]
    assert result.metadata["rule"] == rule


def test_weighted_mean_uses_the_weights_by_key() -> None:
    result = composite_of(
        scored("accuracy", 1.0), scored("style", 0.0), combine="weighted", weights={"accuracy": 3, "style": 1}
    )
    assert result.score == pytest.approx(0.75)


def test_weighted_without_a_weight_for_a_sub_is_an_error_naming_it() -> None:
    result = composite_of(
        scored("accuracy", 1.0), scored("style", 0.0), combine="weighted", weights={"accuracy": 1}
    )
    assert result.error is not None and "style" in result.error


def test_threshold_decides_passing_for_all_and_any() -> None:
    assert composite_of(scored("a", 0.8), scored("b", 0.6), combine="all", threshold=0.5).score is True
    assert composite_of(scored("a", 0.8), scored("b", 0.6), combine="all").score is False


@pytest.mark.parametrize("rule", ["mean", "min", "weighted"])
def test_an_errored_sub_never_counts_as_a_number(rule: str) -> None:
    weights = {"good": 1.0, "broken": 1.0} if rule == "weighted" else None
    result = composite_of(scored("good", 1.0), broken, combine=rule, weights=weights)
    assert result.score is None
    assert result.error is not None and "broken" in result.error and "judge is down" in result.error
    outcomes = {s["key"]: s["outcome"] for s in result.metadata["sub_results"]}
    assert outcomes == {"good": "score", "broken": "error"}


def test_all_and_any_are_decided_by_known_scores_only_when_they_decide() -> None:
    # one known failure decides "all" whatever the errored sub would have said
    decided = composite_of(scored("bad", 0), broken, combine="all")
    assert decided.score is False and decided.metadata["decided_despite_missing"] is True
    # every known sub passes: the errored one could still fail "all", so no verdict
    undecided = composite_of(scored("good", 1), broken, combine="all")
    assert undecided.score is None and undecided.error is not None
    assert composite_of(scored("good", 1), broken, combine="any").score is True
    assert composite_of(scored("bad", 0), broken, combine="any").error is not None


def test_a_skipped_sub_makes_the_composite_skipped_not_zero() -> None:
    result = composite_of(scored("good", 1.0), skipped, combine="mean")
    assert result.error is None and result.score is None
    assert result.metadata["skipped"] is True


def test_a_sub_with_only_a_value_is_an_error_not_a_score() -> None:
    result = composite_of(scored("good", 1.0), lambda outputs: "just text", combine="mean")
    assert result.error is not None and "gave no score" in result.error


def test_callable_rule_gets_the_sub_results() -> None:
    def business_rule(results: list[EvaluationResult]) -> dict[str, Any]:
        by_key = {r.key: r.score for r in results}
        return {"score": by_key["safety"] == 1 and by_key["accuracy"] >= 0.5, "comment": "rule"}

    result = composite_of(scored("safety", 1), scored("accuracy", 0.7), combine=business_rule)
    assert (result.key, result.score, result.comment) == ("composite", True, "rule")
    assert result.metadata["rule"] == "business_rule"
    assert composite_of(scored("safety", 1), broken, combine=business_rule).error is not None


def test_sub_results_stored_as_their_own_metrics_when_asked() -> None:
    results = CompositeEvaluator(
        [scored("a", 1), scored("b", 0)], combine="mean", store_sub_results=True
    ).evaluate(RUN, EXAMPLE)
    assert [r.key for r in results.results] == ["composite", "a", "b"]  # type: ignore[union-attr]


def test_async_and_class_based_subs_run_too() -> None:
    class Length(BaseEvaluator):
        def _evaluate(self, run: Run, example: Example | None = None) -> float:
            return len(run.outputs["answer"]) / 10  # type: ignore[index]

    async def agrees(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> bool:
        return outputs["answer"] == reference_outputs["answer"]

    result = composite_of(Length(name="length"), agrees, combine="min")
    assert result.score == pytest.approx(0.3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"evaluators": []}, "at least one"),
        ({"evaluators": [broken], "combine": "median"}, "unknown combine rule 'median'"),
        ({"evaluators": [broken], "combine": "weighted"}, "needs weights"),
        ({"evaluators": [broken], "combine": "weighted", "weights": {"broken": -1}}, ">= 0"),
    ],
)
def test_bad_configuration_fails_at_construction(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        CompositeEvaluator(**kwargs)


def test_through_evaluate_with_a_built_in_name() -> None:
    def contains_yes(outputs: dict[str, Any]) -> bool:
        return "yes" in outputs["answer"]

    composite = CompositeEvaluator(["exact_match", contains_yes], combine="all", name="release_gate")
    results = assay.evaluate(
        lambda inputs: {"answer": inputs["answer"]},
        data=[
            {"inputs": {"answer": "yes"}, "outputs": {"answer": "yes"}},
            {"inputs": {"answer": "yes please"}, "outputs": {"answer": "yes"}},
        ],
        evaluators=[composite],
        client=assay.Client(database_url="sqlite://"),
        progress=False,
    )
    scores = [row["evaluation_results"]["results"][0].score for row in results]
    assert scores == [True, False]
