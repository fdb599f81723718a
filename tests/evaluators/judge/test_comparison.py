"""Pairwise comparison of stored experiments with randomized, recorded presentation order."""

from __future__ import annotations

from typing import Any

import pytest

import assay
from assay import evaluate_comparative
from assay.evaluators import ComparisonEvaluator
from assay.schemas import Example, Run
from assay.testing import FakeOpenAIServer, RecordedRequest, Reply

QUESTIONS = [f"question {i}" for i in range(24)]  # both orders shown: 1 - 2**-23


def prefers_good(request: RecordedRequest) -> dict[str, str]:
    answer_a = request.text.split("[Answer A]:")[1].split("***")[0]
    return {"reasoning": "the good one", "preference": "A" if "GOOD" in answer_a else "B"}


def experiments(client: assay.Client, *answers: str) -> list[Any]:
    client.create_dataset("qs")
    client.create_examples(
        inputs=[{"q": q} for q in QUESTIONS], outputs=[{"a": "ref"}] * len(QUESTIONS), dataset_name="qs"
    )
    return [
        assay.evaluate(
            lambda inputs, text=text: {"a": f"{text} answer to {inputs['q']}"},
            data="qs",
            client=client,
            experiment_prefix=text,
        )
        for text in answers
    ]


def test_the_better_experiment_wins_whatever_order_the_judge_saw(server: FakeOpenAIServer) -> None:
    server.handler = prefers_good
    client = assay.Client(database_url="sqlite://")
    good, bad = experiments(client, "GOOD", "bad")
    judge = ComparisonEvaluator(server.chat_model(), orders="random", seed=3)
    results = evaluate_comparative([good.experiment_name, bad.experiment.id], [judge], client=client)
    assert results.win_rates() == {good.experiment_name: 1.0, bad.experiment_name: 0.0}
    swaps = [record.metadata["swapped"] for record in results.records]
    assert True in swaps and False in swaps  # both orders were shown
    stored = client.store.list_comparisons(results.name)
    assert len(stored) == len(QUESTIONS)
    for record in stored:
        assert record.key == "preference" and record.error is None
        assert record.scores == {str(good.id): 1.0, str(bad.id): 0.0}
        shown_first = record.metadata["presented_order"][0]
        assert shown_first == (str(bad.id) if record.metadata["swapped"] else str(good.id))
        assert record.metadata["preferred"] == str(good.id)
        assert record.metadata["usage"]["calls"] == 1
    # what the judge saw matches what was recorded
    for request in server.chat_requests:
        assert "[Reference answer]: ref" in request.text


def test_three_experiments_are_judged_pairwise_and_functions_see_all_runs(server: FakeOpenAIServer) -> None:
    server.handler = lambda request: {"reasoning": "same", "preference": "tie"}
    client = assay.Client(database_url="sqlite://")
    exps = experiments(client, "one", "two", "three")

    def longest(runs: list[Run], example: Example) -> dict[str, Any]:
        lengths = [len(run.outputs["a"]) for run in runs]  # type: ignore[index]
        return {
            "key": "longest",
            "scores": {run.id: float(n == max(lengths)) for run, n in zip(runs, lengths)},
        }

    results = evaluate_comparative(exps, [ComparisonEvaluator(server.chat_model()), longest], client=client)
    pairwise = [r for r in results.records if r.key == "preference"]
    assert len(pairwise) == 3 * len(QUESTIONS)
    assert all(set(r.scores.values()) == {0.5} for r in pairwise)
    by_function = [r for r in results.records if r.key == "longest"]
    assert len(by_function) == len(QUESTIONS)
    assert all(r.scores[str(exps[2].id)] == 1.0 and len(r.scores) == 3 for r in by_function)


def test_a_failed_judgement_is_stored_as_an_error(server: FakeOpenAIServer) -> None:
    server.handler = lambda request: Reply.server_error(500)
    client = assay.Client(database_url="sqlite://")
    a, b = experiments(client, "a", "b")
    results = evaluate_comparative([a, b], [ComparisonEvaluator(server.chat_model())], client=client)
    assert len(results.errors) == len(QUESTIONS) and results.win_rates() == {}
    assert all(
        r.scores == {} and "ModelCallError" in (r.error or "")
        for r in client.store.list_comparisons(results.name)
    )


def test_experiments_must_exist_and_share_a_dataset(server: FakeOpenAIServer) -> None:
    client = assay.Client(database_url="sqlite://")
    a, _ = experiments(client, "a", "b")
    other = assay.evaluate(lambda inputs: {"a": 1}, data=[{"inputs": {"q": 1}}], client=client)
    judge = ComparisonEvaluator(server.chat_model())
    with pytest.raises(ValueError, match="share one stored dataset"):
        evaluate_comparative([a, other], [judge], client=client)
    with pytest.raises(LookupError, match="no experiment 'missing'"):
        evaluate_comparative([a, "missing"], [judge], client=client)
    with pytest.raises(ValueError, match="two or more"):
        evaluate_comparative([a], [judge], client=client)


def test_as_a_row_evaluator_it_compares_with_the_reference(server: FakeOpenAIServer) -> None:
    server.handler = prefers_good
    judge = ComparisonEvaluator(server.chat_model(), orders="random", seed=0)
    results = [
        judge.evaluate(Run(outputs={"a": f"GOOD {i}"}), Example(inputs={"q": "x"}, outputs={"a": "meh"}))
        for i in range(6)
    ]
    assert {r.score for r in results} == {1.0}  # type: ignore[union-attr]
    for result, request in zip(results, server.chat_requests):
        # the recorded order is the order the judge saw
        assert result.metadata["swapped"] == ("[Answer A]: meh" in request.text)  # type: ignore[union-attr]
    assert {r.metadata["swapped"] for r in results} == {True, False}  # type: ignore[union-attr]


def test_a_seeded_order_is_reproducible_and_reruns_hit_the_cache(server: FakeOpenAIServer) -> None:
    server.handler = prefers_good
    client = assay.Client(database_url="sqlite://")
    good, bad = experiments(client, "GOOD", "bad")
    first = evaluate_comparative(
        [good, bad],
        [ComparisonEvaluator(server.chat_model(), orders="random", seed=11)],
        client=client,
        max_concurrency=8,
    )
    calls = len(server.chat_requests)
    second = evaluate_comparative(
        [good, bad],
        [ComparisonEvaluator(server.chat_model(), orders="random", seed=11)],
        client=client,
        max_concurrency=3,
    )

    def orders(results: Any) -> dict[str, bool]:
        return {str(r.example_id): r.metadata["swapped"] for r in results.records}

    assert orders(first) == orders(second) and len(set(orders(first).values())) == 2
    assert len(server.chat_requests) == calls  # same prompts: all from the cache
    assert all(r.metadata["usage"]["cached"] for r in second.records)
