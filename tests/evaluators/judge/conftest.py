"""Fixtures of the judge tests: a fresh loopback OpenAI server and a fresh store per test
(the environment is cleaned by the root conftest)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assay.store import Store
from assay.testing import FakeOpenAIServer


@pytest.fixture(autouse=True)
def store(memory_store: Store) -> Store:
    """Every test caches into its own in-memory store (judge calls never leak across tests)."""
    return memory_store


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running
