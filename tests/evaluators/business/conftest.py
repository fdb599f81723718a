"""Fixtures of the business-evaluator tests: warnings about a weaker sandbox are allowed
(the rlimit backend is tested on purpose), and each test gets a fresh in-memory store."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest

from assay.sandbox import SandboxIsolationWarning
from assay.store import open_store
from assay.store.current import use_store


@pytest.fixture(autouse=True)
def quiet_sandbox_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SandboxIsolationWarning)
        yield


@pytest.fixture(autouse=True)
def fresh_store() -> Iterator[None]:
    store = open_store("sqlite://")
    with use_store(store):
        yield
    store.close()
