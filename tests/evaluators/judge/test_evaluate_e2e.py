"""Judges and scorers inside ``assay.evaluate``: stored results, usage, the cache on re-runs,
errors as data, and no API key anywhere in the store or the logs."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.evaluators import CriteriaEvaluator, LLMFeedbackEvaluator
from assay.llm import ModelNotConfiguredError
from assay.scorers import create_summarization_scorer
from assay.testing import FakeOpenAIServer, RecordedRequest, Reply

SECRET = "sk-do-not-leak-4242"
DOCS = [f"Document {i}: the plant in town {i} produced {i * 10} cars in 2020." for i in range(6)]


def summarization_judge(request: RecordedRequest) -> Any:
    if request.schema_name == "SummaryAlignment":
        return {"claims": [{"claim": "c", "reason": "r", "supported": True}]}
    if request.schema_name == "SummaryQuestions":
        return {"questions": ["Did the plant produce cars?", "Was it in 2020?"]}
    if request.schema_name == "SummaryCoverage":
        return {
            "answers": [
                {"question": "q", "reason": "r", "answered": True},
                {"question": "q", "reason": "r", "answered": "2020" in request.text.split("[Questions]")[0]},
            ]
        }
    return {"reasoning": "fine", "value": "Y"}


def summarize(inputs: dict[str, Any]) -> dict[str, Any]:
    text = inputs["document"]
    return {"summary": text if "3" in text else text.split(" in 2020")[0]}


def run_experiment(server: FakeOpenAIServer, client: assay.Client, name: str) -> Any:
    model = server.chat_model(api_key=SECRET)
    scorer = create_summarization_scorer(model, source_extractor=lambda i, o: i["document"])
    return assay.evaluate(
        summarize,
        data=[{"inputs": {"document": d}} for d in DOCS],
        evaluators=[scorer, CriteriaEvaluator("conciseness", model=model)],
        client=client,
        experiment=name,
        max_concurrency=4,
    )


def test_scores_usage_and_a_cached_rerun_that_makes_no_call(
    server: FakeOpenAIServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    server.handler = summarization_judge
    database = tmp_path / "assay.db"
    client = assay.Client(database_url=f"sqlite:///{database}")
    first = run_experiment(server, client, "first")
    assert len(server.chat_requests) == len(DOCS) * 4  # 3 summarization calls + 1 criteria
    rows = list(first)
    scores = {r.key: r.score for row in rows for r in row["evaluation_results"]["results"]}
    assert scores["conciseness"] == 1
    summaries = [r for row in rows for r in row["evaluation_results"]["results"] if r.key == "summarization"]
    assert sorted(r.score for r in summaries) == [0.5] * 5 + [1.0]  # only doc 3 keeps "2020"
    for result in summaries:
        assert result.metadata["usage"]["calls"] == 3 and result.metadata["usage"]["cached"] is False
        assert result.metadata["preprocess_step_result"]["questions"]
        assert result.metadata["analyze_step_result"]["coverage"]

    second = run_experiment(server, client, "second")
    assert len(server.chat_requests) == len(DOCS) * 4  # nothing new: all from the cache
    again = [r for row in second for r in row["evaluation_results"]["results"]]
    assert all(r.metadata["usage"]["cached"] and r.metadata["usage"]["total_tokens"] == 0 for r in again)
    assert sorted(r.score for r in again if r.key == "summarization") == [0.5] * 5 + [1.0]
    client.close()
    assert SECRET.encode() not in database.read_bytes()
    assert SECRET not in caplog.text


def test_judge_errors_are_counted_apart_never_as_zeros(server: FakeOpenAIServer) -> None:
    server.handler = lambda request: (
        Reply.server_error(503)
        if "flaky" in request.text
        else {"verdicts": [{"criterion": "depth", "reasoning": "r", "value": "Y"}]}
    )
    client = assay.Client(database_url="sqlite://")
    results = assay.evaluate(
        lambda inputs: {"answer": inputs["q"]},
        data=[{"inputs": {"q": "solid"}}, {"inputs": {"q": "flaky"}}, {"inputs": {"q": "solid too"}}],
        evaluators=[LLMFeedbackEvaluator(["depth"], model=server.chat_model())],
        client=client,
    )
    depth = results.aggregate["depth"]
    assert depth.errors == 1 and depth.mean == 1.0
    errored = [r for row in results for r in row["evaluation_results"]["results"] if r.error]
    assert len(errored) == 1 and errored[0].score is None and "HTTP 503" in errored[0].error


def test_cot_qa_by_name_in_evaluate(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_JUDGE_MODEL", "openai/local-judge")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    server.handler = lambda request: {
        "reasoning": "4 is right",
        "grade": "CORRECT" if "4" in request.text.split("STUDENT ANSWER:")[1] else "INCORRECT",
    }

    def exact(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> bool:
        return bool(outputs["answer"] == reference_outputs["answer"])

    results = assay.evaluate(
        lambda inputs: {"answer": "4" if inputs["q"] == "2+2" else "7"},
        data=[
            {"inputs": {"q": "2+2"}, "outputs": {"answer": "4"}},
            {"inputs": {"q": "3+3"}, "outputs": {"answer": "6"}},
        ],
        evaluators=[exact, "cot_qa"],
        client=assay.Client(database_url="sqlite://"),
    )
    assert results.aggregate["cot_qa"].mean == 0.5 and results.aggregate["exact"].mean == 0.5
    assert {r.model for r in server.chat_requests} == {"local-judge"}


def test_a_missing_judge_model_fails_before_the_experiment_starts() -> None:
    client = assay.Client(database_url="sqlite://")
    with pytest.raises(ModelNotConfiguredError, match="ASSAY_JUDGE_MODEL"):
        assay.evaluate(
            lambda inputs: inputs, data=[{"inputs": {"q": 1}}], evaluators=["cot_qa"], client=client
        )
    assert client.store.list_experiments() == []
