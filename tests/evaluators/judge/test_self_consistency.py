"""Self-consistency: n samples at a temperature, the majority kept, agreement as confidence."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import assay
from assay.evaluators import CriteriaEvaluator, SelfConsistency
from assay.testing import FakeOpenAIServer, RecordedRequest, Reply


def sampled(plan: dict[str, list[Any]]) -> Any:
    """A model whose successive replies per answer follow ``plan`` (as sampling would)."""
    counters = {key: itertools.count() for key in plan}

    def handler(request: RecordedRequest) -> Any:
        key = next(k for k in plan if f"[Submission]: {k}" in request.text)
        choice = plan[key][next(counters[key]) % len(plan[key])]
        return choice if isinstance(choice, Reply) else {"reasoning": "r", "value": choice}

    return handler


def test_majority_verdict_with_agreement_as_confidence() -> None:
    plan = {
        "sure": ["Y"] * 5,
        "split": ["Y", "N", "Y", "N", "N"],
        "noisy": ["Y", "Y", "Y", "N", Reply.server_error(400)],
    }
    with FakeOpenAIServer(handler=sampled(plan)) as server:
        judge = SelfConsistency(
            CriteriaEvaluator("helpfulness", model=server.chat_model(temperature=0.8)), samples=5
        )
        results = assay.evaluate(
            lambda inputs: inputs["a"],
            data=[{"inputs": {"a": key}} for key in plan],
            evaluators=[judge],
            client=assay.Client(database_url="sqlite://"),
            max_concurrency=1,
        )
        calls = len(server.chat_requests)
    by_answer = {row["run"].outputs["output"]: row["evaluation_results"]["results"][0] for row in results}
    assert calls == 15
    assert by_answer["sure"].value == "Y" and by_answer["sure"].metadata["confidence"] == 1.0
    assert by_answer["split"].value == "N" and by_answer["split"].metadata["confidence"] == pytest.approx(0.6)
    assert sorted(by_answer["split"].metadata["samples"]) == ["N", "N", "N", "Y", "Y"]
    noisy = by_answer["noisy"]
    assert (
        noisy.value == "Y" and noisy.metadata["confidence"] == 0.75 and noisy.metadata["sample_errors"] == 1
    )
    assert by_answer["sure"].metadata["usage"]["calls"] == 5


def test_samples_are_cached_apart_and_a_rerun_replays_them() -> None:
    plan = {"split": ["Y", "N", "N"]}
    with FakeOpenAIServer(handler=sampled(plan)) as server:
        client = assay.Client(database_url="sqlite://")

        def run() -> Any:
            judge = SelfConsistency(
                CriteriaEvaluator("helpfulness", model=server.chat_model(temperature=1.0)), samples=3
            )
            return assay.evaluate(
                lambda inputs: inputs["a"],
                data=[{"inputs": {"a": "split"}}],
                evaluators=[judge],
                client=client,
            )

        first = run()
        second = run()
        assert len(server.chat_requests) == 3  # the second run: all three from the cache
    for results in (first, second):
        (row,) = list(results)
        result = row["evaluation_results"]["results"][0]
        assert sorted(result.metadata["samples"]) == ["N", "N", "Y"] and result.value == "N"


def test_sampling_at_temperature_zero_is_refused() -> None:
    with FakeOpenAIServer() as server:
        with pytest.raises(ValueError, match="temperature"):
            SelfConsistency(CriteriaEvaluator("helpfulness", model=server.chat_model()), samples=3)
