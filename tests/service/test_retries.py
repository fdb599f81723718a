"""Retries against a real HTTP server that fails its first N calls: 5xx, 429 and dropped
connections are retried with growing waits; refusals (4xx) are not; when the attempts are
spent the result is an error naming the last failure, never a score."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from service_testing import FlakyServer, LiveService, free_port

from assay.evaluation._binding import bind_row_evaluator
from assay.schemas import EvaluationResult, Example, Run
from assay.service import RemoteEvaluator
from assay.service.wire import encode_request


def call(evaluator: RemoteEvaluator) -> list[EvaluationResult]:
    run = Run(outputs={"answer": 1})
    return asyncio.run(bind_row_evaluator(evaluator).call_async(run, Example(outputs={"answer": 1})))


@pytest.mark.parametrize("fail", [500, 502, 503, 429, "drop"])
def test_the_first_failures_are_retried_until_an_answer(fail: int | str) -> None:
    with FlakyServer(failures=2, fail=fail) as server:
        [result] = call(RemoteEvaluator(server.url, "flaky", retries=3, backoff=0.01))
    assert result.error is None and result.key == "flaky_metric" and result.score == 0.75
    assert len(server.calls) == 3


def test_the_waits_grow_exponentially() -> None:
    with FlakyServer(failures=3, fail=503) as server:
        [result] = call(RemoteEvaluator(server.url, "flaky", retries=3, backoff=0.2))
    assert result.score == 0.75
    gaps = [later - earlier for earlier, later in zip(server.calls, server.calls[1:])]
    # jitter scales each wait by [0.5, 1]: 0.1-0.2 s, then 0.2-0.4 s, then 0.4-0.8 s
    assert gaps[0] >= 0.1 and gaps[1] >= 0.2 and gaps[2] >= 0.4
    assert sum(gaps) >= 0.7


def test_retry_after_is_honoured() -> None:
    with FlakyServer(failures=1, fail=429, headers={"Retry-After": "0.6"}) as server:
        [result] = call(RemoteEvaluator(server.url, "flaky", retries=1, backoff=0.01))
    assert result.score == 0.75
    assert server.calls[1] - server.calls[0] >= 0.55


def test_spent_attempts_give_an_error_not_a_score() -> None:
    with FlakyServer(failures=10, fail=503) as server:
        [result] = call(RemoteEvaluator(server.url, "flaky", retries=2, backoff=0.01, key="remote_metric"))
    assert len(server.calls) == 3
    assert result.key == "remote_metric" and result.score is None and result.value is None
    assert result.error is not None
    assert "failed after 3 attempt(s): HTTP 503: failing on purpose" in result.error


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_a_refusal_is_not_retried(status: int) -> None:
    with FlakyServer(failures=10, fail=status) as server:
        [result] = call(RemoteEvaluator(server.url, "flaky", retries=5, backoff=0.01))
    assert len(server.calls) == 1
    assert result.score is None and result.error is not None
    assert f"refused the request: HTTP {status}" in result.error


def test_a_timeout_is_an_error_after_its_retries() -> None:
    with FlakyServer(failures=10, fail="slow", delay=600) as server:  # replies only when released
        [result] = call(RemoteEvaluator(server.url, "flaky", timeout=0.3, retries=1, backoff=0.01))
        replied_before_the_result = server.replied
    assert result.score is None and result.error is not None
    assert "failed after 2 attempt(s): no reply within 0.3 s" in result.error
    assert len(server.calls) == 2 and replied_before_the_result == 0  # it gave up; it did not wait


def test_nothing_listening_is_an_error_after_its_retries() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    [result] = call(RemoteEvaluator(url, "exact", retries=2, backoff=0.01))
    assert result.score is None and result.error is not None
    assert "failed after 3 attempt(s): connection failed" in result.error


JSON = {"content-type": "application/json"}


async def _slow(outputs: dict[str, object]) -> float:
    await asyncio.sleep(0.5)
    return 1.0


@pytest.mark.slow
def test_past_the_in_flight_limit_the_service_answers_429_and_the_client_waits() -> None:
    with LiveService({"slow": _slow}, max_in_flight=1) as live:

        async def two_at_once() -> list[httpx.Response]:
            body = encode_request(Run(outputs={}), Example())
            async with httpx.AsyncClient(base_url=live.url) as client:
                send = [
                    client.post("/evaluators/slow/evaluate", content=body, headers=JSON) for _ in range(2)
                ]
                return list(await asyncio.gather(*send))

        statuses = sorted(response.status_code for response in asyncio.run(two_at_once()))
        assert statuses == [200, 429]
        remote = RemoteEvaluator(live.url, "slow", retries=6, backoff=0.05)

        async def through_the_client() -> list[list[EvaluationResult]]:
            bound = bind_row_evaluator(remote)
            return list(
                await asyncio.gather(*(bound.call_async(Run(outputs={}), Example()) for _ in range(3)))
            )

        assert [[r.score for r in results] for results in asyncio.run(through_the_client())] == [[1.0]] * 3
