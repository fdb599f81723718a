"""Opening a store from a URL (SQLAlchemy form) or a bare file path."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from assay.errors import StoreError
from assay.store._masking import masked as _masked
from assay.store.base import Store

__all__ = ["DEFAULT_PATH", "default_url", "open_store", "sqlite_file", "store_exists"]


DEFAULT_PATH = Path(".assay") / "assay.db"


def default_url() -> str:
    return os.environ.get("ASSAY_DATABASE_URL") or str(DEFAULT_PATH)


POSTGRES_SCHEMES = ("postgresql", "postgresql+psycopg", "postgres")


def open_store(url: str | None = None) -> Store:
    """``sqlite:////abs.db``, ``sqlite:///rel.db``, ``sqlite://`` (memory), a path, or
    ``postgresql://user:password@host:port/database`` (also ``postgresql+psycopg://``)."""
    url = url or default_url()
    if not isinstance(url, (str, os.PathLike)):
        raise StoreError(f"database_url must be a URL or a path, got {url!r}")
    url = os.fspath(url)
    scheme, sep, rest = url.partition("://")
    if not sep:
        return _sqlite(os.path.expanduser(url))
    if scheme in ("sqlite", "sqlite+pysqlite"):
        if rest in ("", "/", "/:memory:"):
            return _sqlite(":memory:")
        return _sqlite(os.path.expanduser(rest[1:] if rest.startswith("/") else rest))
    if scheme in POSTGRES_SCHEMES:
        from assay.store.postgres import PostgresStore

        return PostgresStore(url)
    raise StoreError(
        f"unsupported database URL {_masked(url)!r}: assay stores results in SQLite "
        "(sqlite:///relative.db, sqlite:////absolute/path.db or a file path) or in PostgreSQL "
        "(postgresql://user:password@host:port/database)"
    )


def _sqlite(path: str) -> Store:
    from assay.store.sqlite import SQLiteStore

    try:
        return SQLiteStore(path)
    except sqlite3.DatabaseError as exc:  # OperationalError too: a folder, no permission...
        from assay.store.faults import StorageFault, storage_fault  # only a failure needs them
        from assay.store.integrity import StoreCorruptError, corrupt_message, damaged

        if damaged(exc):
            raise StoreCorruptError(corrupt_message(path, [str(exc)])) from None
        fault = storage_fault(exc, str(Path(path).resolve()))
        if fault is not None:
            raise StorageFault(fault) from None
        raise StoreError(f"cannot open the store at {path}: {exc}") from None


def sqlite_file(url: str | None = None) -> str | None:
    """The file of a SQLite store's URL or path, resolved; None for memory or a server."""
    url = url or default_url()
    scheme, sep, rest = url.partition("://")
    if not sep:
        path = url
    elif scheme in ("sqlite", "sqlite+pysqlite") and rest not in ("", "/", "/:memory:"):
        path = rest[1:] if rest.startswith("/") else rest
    else:
        return None
    return str(Path(os.path.expanduser(path)).resolve())


def store_exists(url: str | None = None) -> bool:
    """Whether the store at ``url`` already exists (a memory store never does)."""
    url = url or default_url()
    scheme, sep, rest = url.partition("://")
    if not sep:
        return os.path.exists(os.path.expanduser(url))
    if scheme in ("sqlite", "sqlite+pysqlite") and rest not in ("", "/", "/:memory:"):
        return os.path.exists(os.path.expanduser(rest[1:] if rest.startswith("/") else rest))
    return scheme in POSTGRES_SCHEMES  # a server database: opening it says whether it is there
