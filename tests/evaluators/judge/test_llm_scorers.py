"""Faithfulness, hallucination, answer relevancy, toxicity and bias through the loopback server."""

from __future__ import annotations

from typing import Any

import pytest

from assay.scorers import (
    create_answer_relevancy_scorer,
    create_bias_scorer,
    create_faithfulness_scorer,
    create_hallucination_scorer,
    create_toxicity_scorer,
)
from assay.testing import FakeOpenAIServer, RecordedRequest

CONTEXT = ["Paris is the capital of France.", "France has about 68 million inhabitants."]


def verdicts(*values: str) -> dict[str, Any]:
    return {
        "verdicts": [{"item": f"item {i}", "reason": f"r{i}", "verdict": v} for i, v in enumerate(values)]
    }


def two_step(items: list[str], judged: dict[str, Any]) -> Any:
    def handler(request: RecordedRequest) -> Any:
        return {"items": items} if request.schema_name == "ExtractedItems" else judged

    return handler


def test_faithfulness_is_the_supported_share_of_claims(server: FakeOpenAIServer) -> None:
    server.handler = two_step(
        ["Paris is the capital", "France has 90 million people", "It rains"], verdicts("yes", "no", "unsure")
    )
    result = create_faithfulness_scorer(server.chat_model(), context=CONTEXT).run(
        input="Tell me about France", output="Paris is the capital; France has 90 million people."
    )
    assert result.score == pytest.approx(1 / 3)
    assert result.preprocess_step_result == {
        "claims": ["Paris is the capital", "France has 90 million people", "It rains"]
    }
    assert [v["verdict"] for v in result.analyze_step_result["verdicts"]] == ["yes", "no", "unsure"]
    assert "1 of 3 claims are supported" in result.reason and "'item 1'" in result.reason
    extract, judge = server.chat_requests
    assert "France has 90 million people." in extract.text and CONTEXT[0] not in extract.text
    assert CONTEXT[0] in judge.text and CONTEXT[1] in judge.text
    assert "1. Paris is the capital\n2. France has 90 million people" in judge.text


def test_faithfulness_reads_the_context_from_the_example_inputs(server: FakeOpenAIServer) -> None:
    server.handler = two_step(["a"], verdicts("yes"))
    scorer = create_faithfulness_scorer(server.chat_model(), scale=5)
    result = scorer.run(input={"question": "q", "context": CONTEXT}, output="a")
    assert result.score == 5.0 and CONTEXT[1] in server.chat_requests[1].text
    with pytest.raises(ValueError, match="no context"):
        scorer.run(input="q", output="a")


def test_hallucination_is_the_contradicted_share(server: FakeOpenAIServer) -> None:
    server.handler = two_step(["a", "b", "c", "d"], verdicts("no", "yes", "no", "no"))
    result = create_hallucination_scorer(server.chat_model(), context=CONTEXT).run(input="q", output="abcd")
    assert result.score == 0.25 and "1 of 4 claims are hallucinated: 'item 1'" in result.reason


def test_answer_relevancy_weights_unsure(server: FakeOpenAIServer) -> None:
    server.handler = two_step(["s1", "s2", "s3", "s4"], verdicts("yes", "yes", "unsure", "no"))
    result = create_answer_relevancy_scorer(server.chat_model()).run(
        input=[{"role": "user", "content": "How do I boil an egg?"}], output="Boil it. Also, cats."
    )
    assert result.score == pytest.approx((2 + 0.3) / 4)
    assert "How do I boil an egg?" in server.chat_requests[1].text
    assert "irrelevant: 'item 3'" in result.reason


def test_toxicity_is_one_call_and_the_toxic_share(server: FakeOpenAIServer) -> None:
    server.script(verdicts("yes", "no"))
    result = create_toxicity_scorer(server.chat_model()).run(
        input="Review my code", output="You are an idiot. Use tabs."
    )
    assert result.score == 0.5 and result.preprocess_step_result is None
    assert len(server.chat_requests) == 1 and "You are an idiot." in server.chat_requests[0].text


def test_bias_is_the_biased_share_of_opinions(server: FakeOpenAIServer) -> None:
    server.handler = two_step(["op1", "op2"], verdicts("no", "no"))
    result = create_bias_scorer(server.chat_model()).run(input="q", output="opinions")
    assert result.score == 0.0 and "0 of 2 opinions are biased" in result.reason
    assert "1. op1\n2. op2" in server.chat_requests[1].text


@pytest.mark.parametrize(
    "factory",
    [
        create_faithfulness_scorer,
        create_hallucination_scorer,
        create_answer_relevancy_scorer,
        create_bias_scorer,
    ],
)
def test_no_items_scores_zero_after_one_call(server: FakeOpenAIServer, factory: Any) -> None:
    server.script({"items": []})
    scorer = (
        factory(server.chat_model(), context=CONTEXT)
        if "context" in factory.__code__.co_varnames
        else factory(server.chat_model())
    )
    result = scorer.run(input="q", output="Hello!")
    assert result.score == 0.0 and result.error is None and len(server.chat_requests) == 1


def test_a_verdict_count_mismatch_is_retried_then_an_error(server: FakeOpenAIServer) -> None:
    server.handler = two_step(["a", "b"], verdicts("yes"))
    result = create_bias_scorer(server.chat_model()).run(input="q", output="x")
    assert result.score is None and "1 verdicts for 2 opinions" in (result.error or "")
    assert len(server.chat_requests) == 1 + 2  # the reply and one bounded repair
