"""A SQLite store's integrity: checking it, copying it safely while live, salvaging it.

A store file damaged underneath SQLite (a disk fault, a copy taken with ``cp`` while a
run wrote, bytes overwritten) reads as if whole until a query meets a damaged page. So:

- ``check``: SQLite's ``quick_check`` (the b-trees' structure, O(file)), or with ``full``
  its ``integrity_check`` (indexes against tables too) and the foreign keys.
- before a run writes: a check, when the store is small enough for it to cost little
  (``CHEAP_CHECK_BYTES``), when the run resumes, or when the last process to write left
  its write-ahead log behind (it did not close: killed, or the machine went down).
  A damaged store is refused for writing (``StoreCorruptError``), naming what to do.
- ``backup``: a consistent copy of a live store through SQLite's backup API (never
  ``cp``, whose copy of a file being written is often damaged), checked once written.
- ``recover`` (``salvage``): what can still be read, into a new file, checked once written.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from assay.errors import StoreCorruptError, StoreError

__all__ = [
    "CHEAP_CHECK_BYTES",
    "StoreCorruptError",
    "backup",
    "check",
    "corrupt_message",
    "damaged",
    "left_unclean",
    "new_file",
    "require_copy_whole",
    "require_whole",
]

CHEAP_CHECK_BYTES = 256 << 20  # quick_check reads the whole file: ~0.1-0.5 s per 256 MiB
_BACKUP_PAGES = 4096  # pages copied per step: a live writer waits at most one step
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26  # result codes (the sqlite3 module names them from 3.11)


def corrupt_message(path: str, problems: list[str]) -> str:
    shown = "; ".join(problems[:3]) + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else "")
    return (
        f"the store at {path} is damaged ({shown}), so its stored figures cannot be trusted and "
        f"it is not written to. See what is damaged with `assay store check --full --db {path}`; "
        f"salvage what can be read with `assay store recover --db {path} NEW.db`, or go back to a "
        "copy taken with `assay store backup` (copies made with cp while a run wrote are often "
        "damaged too)"
    )


def damaged(exc: BaseException) -> bool:
    """Whether a SQLite error says the file is damaged (not busy, full or read-only)."""
    if isinstance(exc, sqlite3.DatabaseError):
        code = getattr(exc, "sqlite_errorcode", None)
        if code is not None and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
            return True
        text = str(exc)
        return "malformed" in text or "not a database" in text
    return False


def check(path: str, *, full: bool = False) -> list[str]:
    """What SQLite finds wrong with the store file at ``path`` (empty: nothing)."""
    try:
        conn = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, timeout=30)
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    try:
        pragma = "PRAGMA integrity_check" if full else "PRAGMA quick_check"
        problems = [str(row[0]) for row in conn.execute(pragma) if row[0] != "ok"]
        if full and not problems:
            problems += [
                f"table {row[0]} row {row[1]} refers to a missing row of {row[2]}"
                for row in conn.execute("PRAGMA foreign_key_check")
            ]
        return problems
    except sqlite3.DatabaseError as exc:  # not a database at all, or unreadable
        return [str(exc)]
    finally:
        conn.close()


def left_unclean(path: str) -> bool:
    """Whether the last writer left its write-ahead log unfinished (a clean close of
    the last connection checkpoints it and removes it). A writer still running shows
    the same: then the check merely costs a read."""
    try:
        return os.path.getsize(f"{path}-wal") > 0
    except OSError:
        return False


def require_whole(path: str, *, always: bool = False, unclean: bool = False) -> None:
    """Refuse a damaged store for writing. Checked when ``always`` (a resume), when the
    last writer did not close (``unclean``), or when the file is small enough."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return  # a new store: nothing to check
    if not (always or unclean or size <= CHEAP_CHECK_BYTES):
        return
    problems = check(path)
    if problems:
        raise StoreCorruptError(corrupt_message(path, problems))


def backup(path: str, destination: str) -> int:
    """Copy the store at ``path`` into the new file ``destination`` while runs may be
    writing it; returns the pages copied. The copy is checked before this returns."""
    target = new_file(destination)
    source = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, timeout=30)
    copy = sqlite3.connect(target)
    try:
        source.backup(copy, pages=_BACKUP_PAGES)
        pages = int(copy.execute("PRAGMA page_count").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        copy.close()
        target.unlink(missing_ok=True)
        raise StoreCorruptError(corrupt_message(path, [str(exc)])) from None
    finally:
        source.close()
    copy.close()
    require_copy_whole(target, "the backup")
    return pages


def new_file(destination: str) -> Path:
    target = Path(destination).expanduser().resolve()
    if target.exists():
        raise StoreError(f"{target} already exists; name a new file to write the copy to")
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def require_copy_whole(target: Path, what: str) -> None:
    problems = check(str(target), full=True)
    if problems:
        raise StoreCorruptError(f"{what} at {target} is damaged too: {'; '.join(problems[:3])}")
