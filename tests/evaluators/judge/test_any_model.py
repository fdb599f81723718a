"""Replies that parse on any model: the structured-output ladder against servers that play
vLLM, Ollama and llama.cpp (grammar-constrained decoding), one bounded repair, and the share
of repaired and unparsed replies per judge in the report."""

from __future__ import annotations

from typing import Any

import pytest

import assay
from assay.evaluators import CriteriaEvaluator
from assay.report.plain import plain_report
from assay.testing import FakeOpenAIServer, RecordedRequest

PROSE = "Well, I would say the answer is quite helpful overall."
GRAMMAR_FIELDS = ("guided_json", "format", "json_schema")


def judge_rows(server: FakeOpenAIServer, rows: int = 4, **options: Any) -> assay.ExperimentResults:
    judge = CriteriaEvaluator("helpfulness", model=server.chat_model(**options))
    return assay.evaluate(
        lambda inputs: {"answer": f"row-{inputs['i']}-end"},
        data=[{"inputs": {"i": i}} for i in range(rows)],
        evaluators=[judge],
        client=assay.Client(database_url="sqlite://"),
        max_concurrency=1,
    )


@pytest.mark.parametrize("dialect", ["vllm", "ollama", "llamacpp"])
def test_a_model_that_writes_prose_is_held_to_the_schema_by_the_servers_grammar(dialect: str) -> None:
    """The server rejects response_format; the next rung names the schema in the fields vLLM,
    Ollama and llama.cpp read, so the server's grammar makes even prose schema-valid."""
    with FakeOpenAIServer(handler=lambda r: PROSE, reject_response_format=True, dialect=dialect) as server:
        results = judge_rows(server)
        requests = server.chat_requests
    assert results.aggregate["helpfulness"].n == 4 and results.aggregate["helpfulness"].errors == 0
    assert requests[0].response_format is not None  # the first rung, rejected
    for request in requests[1:]:  # remembered: every later call starts on the grammar rung
        assert request.response_format is None
        assert all(isinstance(request.body.get(name), dict) for name in GRAMMAR_FIELDS)
        assert "JSON schema" in request.messages[0]["content"]  # the meaning, for the model
    assert len(requests) == 1 + 4


def test_a_strict_server_that_rejects_foreign_fields_ends_on_the_prompt() -> None:
    def answers_when_shown_the_schema(request: RecordedRequest) -> Any:
        return {"reasoning": "r", "value": "Y"} if "JSON schema" in request.text else PROSE

    with FakeOpenAIServer(
        handler=answers_when_shown_the_schema, reject_response_format=True, dialect="vllm", strict_fields=True
    ) as server:
        results = judge_rows(server, rows=3)
        requests = server.chat_requests
    assert results.aggregate["helpfulness"].mean == 1.0 and results.aggregate["helpfulness"].errors == 0
    first, second, *rest = requests
    assert first.response_format is not None and second.body.get("guided_json") is not None
    assert rest and all(r.response_format is None and "guided_json" not in r.body for r in rest)
    assert len(rest) == 3


@pytest.mark.parametrize(
    ("mode", "field"), [("vllm", "guided_json"), ("ollama", "format"), ("llamacpp", "json_schema")]
)
def test_a_pinned_dialect_sends_only_its_field(mode: str, field: str) -> None:
    with FakeOpenAIServer(handler=lambda r: PROSE, dialect=mode) as server:
        results = judge_rows(server, rows=1, structured_output=mode)
        (request,) = server.chat_requests
    assert results.aggregate["helpfulness"].errors == 0
    assert request.response_format is None and isinstance(request.body[field], dict)
    assert [name for name in GRAMMAR_FIELDS if name in request.body] == [field]


def test_one_bounded_repair_and_the_share_per_judge_in_the_report() -> None:
    """Rows 0-1 answer well, 2-4 only after the repair, 5 never: an error, never a number."""

    def model(request: RecordedRequest) -> Any:
        row = int(request.text.split("row-")[1].split("-end")[0])
        repairing = "could not be used" in request.text
        if row < 2 or (row < 5 and repairing):
            return {"reasoning": "r", "value": "Y"}
        return PROSE

    with FakeOpenAIServer(handler=model) as server:
        results = judge_rows(server, rows=6, structured_output="prompt")
        calls = len(server.chat_requests)
    metric = results.aggregate["helpfulness"]
    assert metric.n == 5 and metric.errors == 1 and metric.mean == 1.0
    assert calls == 2 + 3 * 2 + 2  # the unparseable row: its reply and exactly one repair
    usage = results.judge_usage()["helpfulness"]
    assert usage["repaired"] == 3 and usage["unparsed"] == 1 and usage["judgements"] == 6
    errored = [r for row in results for r in row["evaluation_results"]["results"] if r.error]
    assert "never gave a usable" in (errored[0].error or "")
    report = plain_report(results)
    line = next(line for line in report.splitlines() if line.startswith("helpfulness") and "%" in line)
    assert "50.0%" in line and "16.7%" in line  # 3 of 6 repaired, 1 of 6 unparsed
