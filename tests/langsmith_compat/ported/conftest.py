"""LangSmith's tests turn tracing on (``tracing_context(enabled=True)``) with no client, as
its users do: their traces go to the default store, here a file of each test's own (not
the working folder's ``.assay``)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def default_store_of_the_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_DATABASE_URL", str(tmp_path / "default-store.db"))
