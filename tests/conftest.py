"""Fixtures every part of the suite shares: no model or embeddings configuration leaks in
from the developer's environment, a fresh in-memory store on request, and a client on a
SQLite file of its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assay import Client
from assay.store import Store, open_store
from assay.store.current import use_store

#: what configures a judge model or an embeddings provider from the environment
MODEL_ENV = (
    "ASSAY_JUDGE_MODEL",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "ASSAY_JUDGE_CACHE",
    "ASSAY_JUDGE_MAX_CONCURRENCY",
    "ASSAY_EMBEDDINGS",
)


@pytest.fixture(autouse=True)
def no_model_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in MODEL_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def memory_store() -> Iterator[Store]:
    """A fresh in-memory store, current for the test (judge and embeddings caches live there)."""
    fresh = open_store("sqlite://")
    with use_store(fresh):
        yield fresh
    fresh.close()


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    """A client on a real SQLite file of its own."""
    client = Client(str(tmp_path / "assay.db"))
    yield client
    client.close()


@pytest.fixture
def examples() -> list[dict]:
    return [{"inputs": {"x": i}, "outputs": {"y": 2 * i}, "metadata": {"parity": i % 2}} for i in range(6)]
