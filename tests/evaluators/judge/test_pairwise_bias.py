"""Bias controls of the pairwise judge: both orders by default, and an injected position or
verbosity bias of the loopback judge caught by the consistency and verbosity figures."""

from __future__ import annotations

import random
from typing import Any

import assay
from assay import evaluate_comparative
from assay.evaluators import ComparisonEvaluator
from assay.testing import Bias, FakeOpenAIServer, RecordedRequest

QUESTIONS = [f"question {i}" for i in range(80)]


def fair_judge(request: RecordedRequest) -> dict[str, str]:
    """Prefers the answer holding the higher quality mark; the marks are balanced."""
    answer_a = request.text.split("[Answer A]:")[1].split("***")[0]
    answer_b = request.text.split("[Answer B]:")[1].split("***")[0]

    def quality(answer: str) -> int:
        return int(answer.split("quality=")[1].split(";")[0])

    qa, qb = quality(answer_a), quality(answer_b)
    return {"reasoning": "r", "preference": "A" if qa > qb else "B" if qb > qa else "tie"}


def two_experiments(client: assay.Client) -> list[Any]:
    """Two systems of equal quality overall (each wins half the questions), with the
    padding (length) independent of quality."""
    rng = random.Random(5)
    marks = [(rng.randint(0, 9), rng.randint(0, 9)) for _ in QUESTIONS]
    pads = [(rng.randint(0, 60), rng.randint(0, 60)) for _ in QUESTIONS]
    client.create_dataset("qs")
    client.create_examples(inputs=[{"i": i} for i in range(len(QUESTIONS))], dataset_name="qs")
    return [
        assay.evaluate(
            lambda inputs, side=side: {
                "a": f"quality={marks[inputs['i']][side]}; " + "padding " * pads[inputs["i"]][side]
            },
            data="qs",
            client=client,
            experiment_prefix=f"system{side}",
        )
        for side in (0, 1)
    ]


def judged(bias: Bias | None, orders: str = "both") -> tuple[Any, int]:
    with FakeOpenAIServer(handler=fair_judge, bias=bias) as server:
        client = assay.Client(database_url="sqlite://")
        first, second = two_experiments(client)
        judge = ComparisonEvaluator(server.chat_model(), orders=orders)  # type: ignore[arg-type]
        results = evaluate_comparative([first, second], [judge], client=client)
        return results, len(server.chat_requests)


def test_both_orders_cost_twice_the_calls_and_an_unbiased_judge_is_consistent() -> None:
    results, calls = judged(None)
    assert calls == 2 * len(QUESTIONS)
    bias = results.bias()
    assert bias.n == len(QUESTIONS) and bias.position_consistency == 1.0
    assert bias.first_shown_rate == 0.5  # each pair shown both ways, same winner both times
    for record in results.records:
        assert record.metadata["position_consistent"] is True
        assert len(record.metadata["preference_as_presented"]) == 2
        assert record.metadata["usage"]["calls"] == 2


def test_an_injected_position_bias_is_caught_by_the_consistency_figure() -> None:
    results, _ = judged(Bias(position=0.5, seed=1))
    bias = results.bias()
    assert bias.position_consistency is not None and bias.position_consistency_interval is not None
    assert bias.position_consistency_interval.high < 0.9  # clearly below a consistent judge
    assert bias.first_shown_rate is not None and bias.first_shown_rate > 0.6
    # a flip is never a win: the inconsistent pairs are recorded as ties
    flipped = [r for r in results.records if not r.metadata["position_consistent"]]
    assert flipped and all(set(r.scores.values()) == {0.5} for r in flipped)
    assert bias.tie_rate is not None and bias.tie_rate >= len(flipped) / len(QUESTIONS)


def test_one_random_order_hides_the_same_bias_in_the_verdicts() -> None:
    """With one order shown there is no consistency figure: the bias only moves scores."""
    results, calls = judged(Bias(position=0.5, seed=1), orders="random")
    assert calls == len(QUESTIONS) and results.bias().position_consistency is None


def test_an_injected_verbosity_bias_shows_in_the_length_correlation() -> None:
    fair, _ = judged(None)
    verbose, _ = judged(Bias(verbosity=0.7, seed=2))
    fair_rho, verbose_rho = fair.bias().verbosity, verbose.bias().verbosity
    assert fair_rho is not None and verbose_rho is not None and verbose_rho.interval is not None
    assert verbose_rho.interval.low > 0.2 and fair_rho.value is not None
    assert verbose_rho.value is not None and verbose_rho.value > fair_rho.value + 0.2
