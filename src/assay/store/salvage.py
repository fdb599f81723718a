"""Salvage: every row of a damaged store file that can still be read, into a new store.

Each table is read by ranges of rowid: a range whose pages are damaged fails to read,
and is halved until the rows around the damage are read and only the unreadable ones
are left out. A range only touches the pages on its path through the b-tree, so the
work is about linear in the file, plus a logarithmic search around each damaged page.
Rows whose parent was lost (a result whose run is gone) are then dropped, so that the
new store's foreign keys hold. Derived tables (metric columns, text indexes) are not
copied: they are rebuilt when first needed.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.store.integrity import new_file, require_copy_whole
from assay.store.sqlite import SQLiteStore

__all__ = ["recover", "salvage"]

_CHUNK = 1024
_DERIVED = {"meta", "metric_column_sets", "metric_columns", "row_orders", "text_indexes"}


def recover(path: str, destination: str) -> dict[str, int]:
    """Write what can still be read of the store at ``path`` into the new store file
    ``destination`` (rows on damaged pages are lost, and rows that depended on them; the
    rest is kept); the damaged file is read from a copy, never written. Returns the rows
    copied per table."""
    target = new_file(destination)
    SQLiteStore(target).close()  # the current schema, empty
    with tempfile.TemporaryDirectory(prefix="assay-recover-") as scratch:
        copy = Path(scratch) / "damaged.db"
        shutil.copyfile(path, copy)
        if os.path.exists(f"{path}-wal"):
            shutil.copyfile(f"{path}-wal", f"{copy}-wal")
        damaged_conn = sqlite3.connect(copy, isolation_level=None)
        into = sqlite3.connect(target, isolation_level=None)
        try:
            copied = salvage(damaged_conn, into)
        finally:
            damaged_conn.close()
            into.close()
    require_copy_whole(target, "the recovered copy")
    return copied


def salvage(damaged: sqlite3.Connection, target: sqlite3.Connection) -> dict[str, int]:
    """Copy what ``damaged`` can still give into ``target`` (a new, empty store of the
    same schema); returns the rows copied per table."""
    copied: dict[str, int] = {}
    target.execute("PRAGMA foreign_keys = OFF")
    for table in _tables(target):
        columns = _shared_columns(damaged, target, table)
        if not columns:
            continue
        names = ", ".join(f'"{c}"' for c in columns)
        insert = f'INSERT OR IGNORE INTO "{table}" ({names}) VALUES ({", ".join("?" * len(columns))})'
        target.execute("BEGIN")
        count = 0
        for rows in _readable(damaged, table, names):
            target.executemany(insert, rows)
            count += len(rows)
        target.execute("COMMIT")
        copied[table] = count
    _drop_orphans(target)
    target.execute("PRAGMA foreign_keys = ON")
    return copied


def _tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' "
        "AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
    )
    return [row[0] for row in rows if row[0] not in _DERIVED and not row[0].startswith("text_")]


def _shared_columns(damaged: sqlite3.Connection, target: sqlite3.Connection, table: str) -> list[str]:
    try:
        theirs = [row[1] for row in damaged.execute(f'PRAGMA table_info("{table}")')]
    except sqlite3.DatabaseError:
        return []
    mine = {row[1] for row in target.execute(f'PRAGMA table_info("{table}")')}
    return [column for column in theirs if column in mine]


def _readable(conn: sqlite3.Connection, table: str, names: str) -> Iterator[list[Any]]:
    """The table's readable rows, a chunk at a time, in rowid order. Past a gap (rows
    deleted, or a bound guessed past the end), readable empty ranges double in size."""
    last = _last_rowid(conn, table)
    start = _first_rowid(conn, table)
    if last is None or start is None:
        return
    size = _CHUNK
    pending = [(start, min(start + size - 1, last))]
    while pending:
        low, high = pending.pop()
        try:
            rows = conn.execute(
                f'SELECT {names} FROM "{table}" WHERE rowid BETWEEN ? AND ?', (low, high)
            ).fetchall()
        except sqlite3.DatabaseError:
            if low < high:  # halve around the damage; the lower half is read first
                middle = (low + high) // 2
                pending += [(middle + 1, high), (low, middle)]
            continue
        size = _CHUNK if rows else 2 * size
        if rows:
            yield rows
        if not pending and high < last:
            pending.append((high + 1, min(high + size, last)))


def _last_rowid(conn: sqlite3.Connection, table: str) -> int | None:
    try:
        value = conn.execute(f'SELECT MAX(rowid) FROM "{table}"').fetchone()[0]
    except sqlite3.DatabaseError:
        return 1 << 62  # its rightmost path is damaged: read on (empty ranges grow) to the end
    return None if value is None else int(value)


def _first_rowid(conn: sqlite3.Connection, table: str) -> int | None:
    try:
        value = conn.execute(f'SELECT MIN(rowid) FROM "{table}"').fetchone()[0]
    except sqlite3.DatabaseError:
        return 1
    return None if value is None else int(value)


def _drop_orphans(conn: sqlite3.Connection) -> None:
    """Delete rows whose parent row was lost, until the foreign keys hold."""
    while orphans := conn.execute("PRAGMA foreign_key_check").fetchall():
        conn.execute("BEGIN")
        for table, rowid, _, _ in orphans:
            conn.execute(f'DELETE FROM "{table}" WHERE rowid = ?', (rowid,))
        conn.execute("COMMIT")
