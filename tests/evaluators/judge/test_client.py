"""The OpenAI-compatible client against the loopback server: retries, limits, errors."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest

from assay.llm import ChatModel, ChatRequest, ModelCallError, OpenAICompatibleClient, RetryPolicy
from assay.testing import FakeOpenAIServer, Reply

HELLO = ChatRequest([{"role": "user", "content": "hello"}])


async def test_a_429_then_200_succeeds_after_the_retry_after_wait(server: FakeOpenAIServer) -> None:
    server.script(Reply.rate_limited(retry_after=0.3), "fine")
    started = time.perf_counter()
    reply = await OpenAICompatibleClient(server.chat_model()).complete(HELLO)
    assert reply.content == "fine"
    assert time.perf_counter() - started >= 0.3
    assert len(server.chat_requests) == 2


async def test_repeated_500s_end_as_an_error_after_the_bounded_attempts(server: FakeOpenAIServer) -> None:
    server.handler = lambda request: Reply.server_error(500)
    client = OpenAICompatibleClient(server.chat_model(retry=RetryPolicy(max_attempts=3, initial_delay=0.01)))
    with pytest.raises(ModelCallError, match="after 3 attempt") as caught:
        await client.complete(HELLO)
    assert caught.value.status == 500
    assert len(server.chat_requests) == 3


async def test_a_garbled_body_and_a_timeout_are_retried(server: FakeOpenAIServer) -> None:
    server.script(Reply.malformed_body(), Reply.slow(1.0, "too late"), "ok")
    client = OpenAICompatibleClient(server.chat_model(timeout=0.3))
    assert (await client.complete(HELLO)).content == "ok"
    assert len(server.chat_requests) == 3


async def test_a_refused_request_is_not_retried_and_hides_the_key(server: FakeOpenAIServer) -> None:
    server.script(Reply(status=401, body=b'{"error": {"message": "Incorrect API key sk-fake-test-key"}}'))
    with pytest.raises(ModelCallError) as caught:
        await OpenAICompatibleClient(server.chat_model()).complete(HELLO)
    assert caught.value.status == 401 and "HTTP 401" in str(caught.value)
    assert "sk-fake-test-key" not in str(caught.value) and "***" in str(caught.value)
    assert len(server.chat_requests) == 1


async def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = ChatModel(
        model="m",
        base_url=f"http://127.0.0.1:{port}/v1",
        retry=RetryPolicy(max_attempts=2, initial_delay=0.01),
    )
    with pytest.raises(ModelCallError, match="connection failed"):
        await OpenAICompatibleClient(model).complete(HELLO)


async def test_the_per_model_limit_is_shared_by_every_client_of_the_model() -> None:
    with FakeOpenAIServer(handler=lambda request: Reply.slow(0.05, "ok")) as server:
        clients = [OpenAICompatibleClient(server.chat_model(max_concurrency=3)) for _ in range(4)]
        await asyncio.gather(*(clients[i % 4].complete(HELLO) for i in range(20)))
        assert len(server.chat_requests) == 20
        assert server.max_in_flight == 3


def test_the_limit_holds_across_threads_and_event_loops() -> None:
    import threading

    with FakeOpenAIServer(handler=lambda request: Reply.slow(0.05, "ok")) as server:
        client = OpenAICompatibleClient(server.chat_model(max_concurrency=2))

        def worker() -> None:
            asyncio.run(client.complete(HELLO))

        threads = [threading.Thread(target=worker) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(server.chat_requests) == 6 and server.max_in_flight == 2


async def test_request_body_carries_model_and_sampling_parameters(server: FakeOpenAIServer) -> None:
    server.script("ok")
    model = server.chat_model(temperature=0.2, max_tokens=50, params={"seed": 7})
    await OpenAICompatibleClient(model).complete(HELLO)
    body = server.chat_requests[0].body
    assert (body["model"], body["temperature"], body["max_tokens"], body["seed"]) == (
        "fake-judge",
        0.2,
        50,
        7,
    )
    assert server.chat_requests[0].headers["authorization"] == "Bearer ***"


async def test_cancelling_the_caller_cancels_the_call(server: FakeOpenAIServer) -> None:
    server.script(Reply.slow(0.5, "late"))
    task = asyncio.ensure_future(OpenAICompatibleClient(server.chat_model()).complete(HELLO))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
