"""Fixtures of the judge tests: a fresh loopback OpenAI server and a fresh store per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assay.store import Store, open_store
from assay.store.current import use_store
from assay.testing import FakeOpenAIServer

JUDGE_ENV = ("ASSAY_JUDGE_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "ASSAY_JUDGE_CACHE",
             "ASSAY_JUDGE_MAX_CONCURRENCY")


@pytest.fixture(autouse=True)
def clean_judge_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in JUDGE_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def store() -> Iterator[Store]:
    """Every test caches into its own in-memory store (judge calls never leak across tests)."""
    fresh = open_store("sqlite://")
    with use_store(fresh):
        yield fresh
    fresh.close()


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running
