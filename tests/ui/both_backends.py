"""The ``store`` of a test on SQLite and PostgreSQL (``store_url``), and ``db``, a reader
of it, for the page tests that check both backends. A test module imports the fixtures
(``from both_backends import on_both_backends, reader_of_both``); pytest names them
``store`` and ``db`` there, in place of the folder's SQLite ``store``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from assay.store import Store, open_store
from assay.store.read.database import ReadOnlyDatabase

__all__ = ["on_both_backends", "reader_of_both"]


@pytest.fixture(name="store")
def on_both_backends(store_url: str) -> Iterator[Store]:
    opened = open_store(store_url)
    yield opened
    opened.close()


@pytest.fixture(name="db")
def reader_of_both(store: Store) -> Iterator[ReadOnlyDatabase]:
    reader = ReadOnlyDatabase(store)
    yield reader
    reader.close()
