"""Read-only access to the store's database for its readers (the UI): SQLite or PostgreSQL.

A file-backed store gets its own connections opened with ``mode=ro`` (SQLite itself
refuses writes, and readers never block the writer in WAL mode). An in-memory store
can only be reached through its own per-thread connections; the UI only ever runs
SELECTs on them. A PostgreSQL store gets connections of the UI's own whose sessions are
read-only (``default_transaction_read_only``); the queries, written in SQLite's dialect,
reach PostgreSQL through the store's dialect seam (``assay.store.postgres._dialect``).
The read model's queries (``store.read``) take one of these.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote

from assay.store.base import Store

__all__ = ["ReadOnlyDatabase"]


class ReadOnlyDatabase:
    """Per-thread read-only connections to the database behind a store."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.builds_text_indexes = False  # whether a search may build a text index (the server's)
        self.text_builds: set[str] = set()  # experiments whose text index is being built
        self._local = threading.local()
        self._opened: list[Any] = []
        self._lock = threading.Lock()
        self._postgres = _postgres_dsn(store)
        if self._postgres is not None:
            self._path: Path | None = None
            return
        conn = getattr(store, "conn", None)
        if not isinstance(conn, sqlite3.Connection):
            raise TypeError(
                f"the assay UI reads SQLite stores; {type(store).__name__} has no SQLite connection"
            )
        self._path = _database_file(conn)

    @property
    def store(self) -> Store:
        """The store itself, for the derived indexes the UI may build (never user data)."""
        return self._store

    @property
    def is_postgres(self) -> bool:
        return self._postgres is not None

    @property
    def is_file(self) -> bool:
        """Whether the database outlives the process (a file, or a server's database)."""
        return self._path is not None or self._postgres is not None

    @property
    def conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._open()
        return conn

    def _open(self) -> sqlite3.Connection:
        if self._postgres is not None:
            return cast(sqlite3.Connection, self._open_postgres(self._postgres))
        if self._path is None:
            # The store's own per-thread connection: the only way into a private in-memory
            # database. The UI only ever runs SELECTs on it.
            shared: sqlite3.Connection = cast(Any, self._store).conn
            return shared
        uri = f"file:{quote(str(self._path))}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=30)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA query_only = ON")
        # Per connection, and the server has one per thread: a bounded cache and map keep a
        # scan of a million-row experiment from holding the whole file in the server's RSS.
        conn.execute("PRAGMA cache_size = -16384")
        # Pages come from the OS cache through the map, so a new thread's connection starts warm.
        conn.execute("PRAGMA mmap_size = 268435456")
        with self._lock:
            self._opened.append(conn)
        return conn

    def _open_postgres(self, dsn: str) -> Any:
        from assay.store.postgres._conn import connect

        conn = connect(dsn, application_name="assay-ui", read_only=True)
        with self._lock:
            self._opened.append(conn)
        return conn

    def query(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[sqlite3.Row]:
        cursor = self.conn.execute(sql, params)
        if self._postgres is None:
            cursor.row_factory = sqlite3.Row
        return cursor.fetchall()

    def query_one(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> sqlite3.Row | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def close(self) -> None:
        with self._lock:
            for conn in self._opened:
                conn.close()
            self._opened.clear()


def _postgres_dsn(store: Store) -> str | None:
    """The connection string of a PostgreSQL store, or None for any other store."""
    from assay.store.open import POSTGRES_SCHEMES

    if store.url.partition("://")[0] not in POSTGRES_SCHEMES:
        return None
    dsn: str = cast(Any, store)._dsn
    return dsn


def _database_file(conn: sqlite3.Connection) -> Path | None:
    """The main database's file, or None for an in-memory database."""
    for row in conn.execute("PRAGMA database_list").fetchall():
        if row[1] == "main":
            return Path(row[2]) if row[2] else None
    return None
