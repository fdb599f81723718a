"""Rate limits: the adaptive (AIMD) per-model limit against a loopback server that answers
429 + Retry-After past 20 calls in flight, and the tokens-per-minute budget."""

from __future__ import annotations

import asyncio

import assay
from assay.evaluators import CriteriaEvaluator
from assay.llm._limits import DECREASE, ModelLimiter, all_limiters
from assay.testing import FakeOpenAIServer

VERDICT = {"reasoning": "r", "value": "Y"}


def test_a_server_limiting_at_20_is_run_at_its_limit_without_a_failed_row() -> None:
    with FakeOpenAIServer(handler=lambda r: VERDICT, latency=0.03, concurrency_limit=20) as server:
        model = server.chat_model(max_concurrency=48, cache=False)
        results = assay.evaluate(
            lambda inputs: inputs["i"],
            data=[{"inputs": {"i": i}} for i in range(600)],
            evaluators=[CriteriaEvaluator("helpfulness", model=model)],
            client=assay.Client(database_url="sqlite://"),
            max_concurrency=64,
        )
        limiter = all_limiters()[(server.base_url, server.model)]
        rejected, peak = server.rejected, server.max_chats_in_flight
    metric = results.aggregate["helpfulness"]
    assert metric.n == 600 and metric.errors == 0 and metric.mean == 1.0  # no failed row
    assert rejected > 0 and limiter.rate_limited == rejected  # the limit was found, not avoided
    assert peak == 20  # and used
    assert int(20 * DECREASE) <= limiter.capacity <= 21  # settled at the server's capacity


def test_additive_increase_and_one_cut_per_window() -> None:
    async def scenario() -> ModelLimiter:
        limiter = ModelLimiter(10)
        async with limiter.slot() as epoch:
            pass
        limiter.throttled(epoch, None)
        limiter.throttled(epoch, None)  # the same window: no second cut
        assert limiter.capacity == int(10 * DECREASE)
        for _ in range(limiter.capacity):
            limiter.succeeded()
        return limiter

    limiter = asyncio.run(scenario())
    assert limiter.capacity == int(10 * DECREASE) + 1 and limiter.rate_limited == 2


def test_a_tokens_per_minute_budget_holds_calls() -> None:
    async def scenario() -> tuple[bool, bool]:
        limiter = ModelLimiter(4, tokens_per_minute=100)
        async with limiter.slot():
            pass
        limiter.succeeded(tokens=120)  # the minute's budget is spent
        held = asyncio.ensure_future(limiter._acquire())
        await asyncio.sleep(0.05)
        waiting = not held.done()
        held.cancel()
        fresh = ModelLimiter(4, tokens_per_minute=100)
        fresh.succeeded(tokens=50)
        await asyncio.wait_for(fresh._acquire(), 1.0)
        return waiting, fresh.active == 1

    assert asyncio.run(scenario()) == (True, True)


def test_retry_after_pauses_new_calls() -> None:
    retry_after = 0.2

    async def scenario() -> float:
        limiter = ModelLimiter(4)
        loop = asyncio.get_running_loop()
        async with limiter.slot() as epoch:
            limiter.throttled(epoch, retry_after)
        start = loop.time()
        async with limiter.slot():
            return loop.time() - start

    assert asyncio.run(scenario()) >= retry_after * 0.99  # a lower bound: load cannot break it


def test_the_progress_bar_shows_the_limit_of_a_rate_limited_model() -> None:
    from assay.report.terminal import _judge_limits

    with FakeOpenAIServer(
        handler=lambda r: VERDICT, latency=0.02, concurrency_limit=3, model="bar-judge"
    ) as server:
        assay.evaluate(
            lambda inputs: inputs["i"],
            data=[{"inputs": {"i": i}} for i in range(40)],
            evaluators=[
                CriteriaEvaluator("helpfulness", model=server.chat_model(max_concurrency=12, cache=False))
            ],
            client=assay.Client(database_url="sqlite://"),
            max_concurrency=16,
        )
        limiter = all_limiters()[(server.base_url, "bar-judge")]
    assert f"bar-judge: {limiter.capacity} in flight" in _judge_limits()
