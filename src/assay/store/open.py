"""Opening a store from a URL (SQLAlchemy form) or a bare file path."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from assay.store.base import Store
from assay.store.errors import StoreError

DEFAULT_PATH = Path(".assay") / "assay.db"


def default_url() -> str:
    return os.environ.get("ASSAY_DATABASE_URL") or str(DEFAULT_PATH)


def open_store(url: Optional[str] = None) -> Store:
    """``sqlite:////abs.db``, ``sqlite:///rel.db``, ``sqlite://`` (memory), or a path."""
    from assay.store.sqlite import SQLiteStore

    url = url or default_url()
    scheme, sep, rest = url.partition("://")
    if not sep:
        return SQLiteStore(url)
    if scheme in ("sqlite", "sqlite+pysqlite"):
        if rest in ("", "/", "/:memory:"):
            return SQLiteStore(":memory:")
        return SQLiteStore(rest[1:] if rest.startswith("/") else rest)
    raise StoreError(
        f"unsupported database URL {url!r}: this assay stores results in SQLite "
        "(sqlite:///relative.db, sqlite:////absolute/path.db or a file path)"
    )
