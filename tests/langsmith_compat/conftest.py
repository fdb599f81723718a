from __future__ import annotations

from pathlib import Path

import pytest

from assay import Client


@pytest.fixture
def client(tmp_path: Path) -> Client:
    """A client on a real SQLite file of its own."""
    client = Client(str(tmp_path / "assay.db"))
    yield client
    client.close()


@pytest.fixture
def examples() -> list[dict]:
    return [{"inputs": {"x": i}, "outputs": {"y": 2 * i}, "metadata": {"parity": i % 2}} for i in range(6)]
