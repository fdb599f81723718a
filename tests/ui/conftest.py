"""Fixtures for the UI tests. The builders live in ui_testdata.py, importable by the tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from ui_testdata import Scenario, build_scenario  # noqa: E402

from assay.store import Store, open_store  # noqa: E402


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(str(tmp_path / "ui.db"))
    yield opened
    opened.close()


@pytest.fixture
def scenario(store: Store) -> Scenario:
    return build_scenario(store)
