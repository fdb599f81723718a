"""The loopback OpenAI-compatible server, spoken to with a plain HTTP client."""

from __future__ import annotations

import httpx
import pytest

from assay.testing import FakeOpenAIServer, RecordedRequest, Reply


def chat(server: FakeOpenAIServer, content: str = "hello", **body: object) -> httpx.Response:
    payload = {"model": "m", "messages": [{"role": "user", "content": content}], **body}
    return httpx.post(
        f"{server.base_url}/chat/completions",
        json=payload,
        headers={"Authorization": "Bearer sk-real-secret"},
        timeout=5,
    )


def test_scripted_replies_are_served_in_order_then_the_handler(server: FakeOpenAIServer) -> None:
    server.script("first", {"value": "Y"})
    server.handler = lambda request: f"echo: {request.messages[-1]['content']}"
    replies = [chat(server, f"q{i}").json()["choices"][0]["message"]["content"] for i in range(3)]
    assert replies == ["first", '{"value": "Y"}', "echo: q2"]
    body = chat(server).json()
    assert body["object"] == "chat.completion"
    assert (
        body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
    )


def test_requests_are_recorded_without_the_api_key(server: FakeOpenAIServer) -> None:
    server.script("ok")
    chat(
        server,
        "what is 2+2?",
        response_format={"type": "json_schema", "json_schema": {"name": "Grade", "schema": {}}},
    )
    [request] = server.chat_requests
    assert request.text == "what is 2+2?"
    assert request.schema_name == "Grade"
    assert request.headers["authorization"] == "Bearer ***"
    assert "sk-real-secret" not in repr(server.requests)


def test_injected_faults(server: FakeOpenAIServer) -> None:
    server.script(Reply.rate_limited(retry_after=2), Reply.server_error(503), Reply.malformed_body())
    limited = chat(server)
    assert (limited.status_code, limited.headers["retry-after"]) == (429, "2")
    assert chat(server).status_code == 503
    garbled = chat(server)
    assert garbled.status_code == 200
    with pytest.raises(ValueError):
        garbled.json()


def test_delays_hold_the_reply(server: FakeOpenAIServer) -> None:
    server.script(Reply.slow(0.3, "late"))
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{server.base_url}/chat/completions", json={"messages": []}, timeout=0.1)


def test_rejecting_response_format_like_an_older_server() -> None:
    with FakeOpenAIServer(["plain"], reject_response_format=True) as server:
        rejected = chat(server, response_format={"type": "json_schema"})
        assert rejected.status_code == 400
        assert "response_format" in rejected.json()["error"]["message"]
        assert chat(server).json()["choices"][0]["message"]["content"] == "plain"


def test_a_handler_answering_none_is_a_clear_client_error(server: FakeOpenAIServer) -> None:
    server.handler = lambda request: None
    response = chat(server)
    assert response.status_code == 400
    assert "the handler returned None" in response.json()["error"]["message"]


def test_by_default_every_judge_gets_a_valid_answer(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """One line tests a pipeline of judges offline: no reply schemas to reverse-engineer."""
    from assay import Client, evaluate
    from assay.evaluators import CriteriaEvaluator, LabeledCriteriaEvaluator
    from assay.scorers import (
        create_answer_relevancy_scorer,
        create_bias_scorer,
        create_faithfulness_scorer,
        create_hallucination_scorer,
        create_summarization_scorer,
        create_toxicity_scorer,
    )

    with FakeOpenAIServer() as server:
        judge = server.chat_model()
        judges = [
            CriteriaEvaluator("conciseness", model=judge),
            LabeledCriteriaEvaluator("correctness", model=judge),
            create_summarization_scorer(model=judge),
            create_faithfulness_scorer(model=judge, context=["Paris is in France."]),
            create_hallucination_scorer(model=judge, context=["Paris is in France."]),
            create_answer_relevancy_scorer(model=judge),
            create_toxicity_scorer(model=judge),
            create_bias_scorer(model=judge),
        ]
        results = evaluate(
            lambda inputs: {"output": "Paris is the capital of France."},
            data=[{"inputs": {"question": "Capital of France?"}, "outputs": {"answer": "Paris"}}],
            evaluators=judges,
            client=Client(str(tmp_path / "s.db")),
            progress=False,
        )
        schemas = {r.schema_name for r in server.chat_requests}
    aggregate = results.aggregate
    errors = {r.key: r.error for r in results.rows[0].results if r.error}
    assert not errors and all(metric.n == 1 for metric in aggregate.values()), (errors, aggregate)
    assert len(aggregate) >= 8 and len(schemas) >= 5


def test_a_failing_handler_is_a_500_and_is_kept(server: FakeOpenAIServer) -> None:
    def broken(request: RecordedRequest) -> str:
        raise ZeroDivisionError("handler bug")

    server.handler = broken
    assert chat(server).status_code == 500
    assert isinstance(server.handler_errors[0], ZeroDivisionError)


def test_embeddings_endpoint_uses_the_callable() -> None:
    with FakeOpenAIServer(embeddings=lambda texts: [[float(len(t)), 1.0] for t in texts]) as server:
        response = httpx.post(
            f"{server.base_url}/embeddings", json={"model": "e", "input": ["ab", "abcd"]}, timeout=5
        )
        assert [item["embedding"] for item in response.json()["data"]] == [[2.0, 1.0], [4.0, 1.0]]
        single = httpx.post(f"{server.base_url}/embeddings", json={"input": "xyz"}, timeout=5)
        assert single.json()["data"][0]["embedding"] == [3.0, 1.0]


def test_embeddings_without_a_handler_and_unknown_routes_are_404(server: FakeOpenAIServer) -> None:
    assert httpx.post(f"{server.base_url}/embeddings", json={"input": "x"}, timeout=5).status_code == 404
    assert httpx.post(f"{server.base_url}/nothing", json={}, timeout=5).status_code == 404
    assert httpx.get(f"{server.base_url}/models", timeout=5).json()["data"][0]["id"] == "fake-judge"


def test_stop_closes_kept_alive_connections() -> None:
    server = FakeOpenAIServer(["a"]).start()
    with httpx.Client() as client:
        url = f"{server.base_url}/chat/completions"
        assert client.post(url, json={"messages": []}, timeout=5).status_code == 200
        server.stop()
        with pytest.raises(httpx.TransportError):
            client.post(url, json={"messages": []}, timeout=2)


def test_the_server_runs_as_its_own_process() -> None:
    import subprocess
    import sys

    command = [sys.executable, "-m", "assay.testing", "--reply", '{"value": "Y"}', "--latency", "0.05"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            base_url = process.stdout.readline().split()[-1]
            assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
            reply = httpx.post(f"{base_url}/chat/completions", json={"messages": []}, timeout=5)
            assert reply.json()["choices"][0]["message"]["content"] == '{"value": "Y"}'
            stats = httpx.get(base_url.removesuffix("/v1") + "/_assay/stats", timeout=5).json()
            assert (stats["chat_requests"], stats["max_in_flight"]) == (1, 1)
        finally:
            process.terminate()
        assert process.wait(timeout=10) == 0
