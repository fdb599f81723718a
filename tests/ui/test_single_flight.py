"""Identical compare requests arriving together are computed once and all answered 200
with the same answer; distinct ones past the limit still get 503; a failed computation
leaves those waiting for it to compute their own."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx
import pytest
from ui_testdata import Scenario

from assay.ui import create_app, queries
from assay.ui.limits import HeavyRequestLimit


class Gate:
    """Holds compare_page (the real one) until every request is in, counting calls."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.calls = 0
        self.open = threading.Event()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if not self.open.wait(timeout=30):
            raise AssertionError("the gate was never opened")
        return self.real(*args, **kwargs)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Gate:
    gate = Gate(queries.compare_page)
    monkeypatch.setattr(queries, "compare_page", gate)
    return gate


async def _all_waiting(app: Any, count: int, gate: Gate) -> None:
    """Until ``count`` requests wait on a flight or the gate (no clock: their state)."""
    limit = _limit_of(app)
    for _ in range(30_000):  # a guard against a hang, not a timing
        if gate.calls >= 1 and limit.waiting >= count:
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"{gate.calls} computing, {limit.waiting} waiting: expected 1 and {count}")


def _limit_of(app: Any) -> HeavyRequestLimit:
    layer = app.middleware_stack
    while not isinstance(layer, HeavyRequestLimit):
        layer = layer.app
    return layer


async def _ask(app: Any, paths: list[str], gate: Gate, waiting: int) -> list[httpx.Response]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        await client.get("/api/experiments")  # builds the middleware stack
        asks = [asyncio.create_task(client.get(path)) for path in paths]
        await _all_waiting(app, waiting, gate)
        gate.open.set()
        return list(await asyncio.gather(*asks))


def test_sixteen_identical_compares_are_computed_once(scenario: Scenario, gate: Gate) -> None:
    app = create_app(scenario.store)
    path = "/api/compare?e=baseline&e=candidate&show=regressions"
    answers = asyncio.run(_ask(app, [path] * 16, gate, waiting=15))
    assert [answer.status_code for answer in answers] == [200] * 16
    assert gate.calls == 1
    assert len({answer.content for answer in answers}) == 1
    assert answers[0].json()["experiments"][0]["name"] == "baseline"


def test_distinct_compares_past_the_limit_are_still_refused(scenario: Scenario, gate: Gate) -> None:
    app = create_app(scenario.store, max_heavy_requests=1)
    paths = ["/api/compare?e=baseline&e=candidate", "/api/compare?e=baseline&e=candidate&show=changed"]
    paths += [paths[0]] * 3  # these share the first one's answer
    answers = asyncio.run(_ask(app, paths, gate, waiting=3))
    assert [answer.status_code for answer in answers] == [200, 503, 200, 200, 200]
    assert gate.calls == 1


def test_a_failed_computation_leaves_its_followers_to_compute_their_own(
    scenario: Scenario, gate: Gate
) -> None:
    real, failed = gate.real, []

    def fails_once(*args: Any, **kwargs: Any) -> Any:
        if not failed:
            failed.append(True)
            raise RuntimeError("the store went away")
        return real(*args, **kwargs)

    gate.real = fails_once
    app = create_app(scenario.store)
    path = "/api/compare?e=baseline&e=candidate"

    async def ask() -> list[int]:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            await client.get("/api/experiments")
            asks = [asyncio.create_task(client.get(path)) for _ in range(3)]
            await _all_waiting(app, 2, gate)
            gate.open.set()
            return [answer.status_code for answer in await asyncio.gather(*asks)]

    statuses = asyncio.run(ask())
    assert sorted(statuses) == [200, 200, 500]
    assert gate.calls == 2  # the failed one, then one of its followers for both
