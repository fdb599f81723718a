"""What a storage failure was, said so that the next step is clear: the disk is full,
the file system is read-only, the disk failed to read or write, another process holds
the database, or the file is damaged. Each message ends with how to go on: the rows
committed before the failure are kept, and ``--resume`` continues from them.

Recognised from SQLite's result codes, the operating system's errno, and PostgreSQL's
SQLSTATE classes, wherever they are in the exception's chain.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from typing import Any

from assay.errors import StorageFault
from assay.store._masking import masked
from assay.store.integrity import StoreCorruptError, corrupt_message, damaged

__all__ = ["StorageFault", "storage_fault"]

_RESUME = (
    "The rows committed before it are kept: continue with `assay run ... --experiment NAME "
    "--resume` (resume=True) once that is fixed."
)
# SQLite primary result codes
_BUSY, _LOCKED, _READONLY, _IOERR, _FULL, _CANTOPEN = 5, 6, 8, 10, 13, 14


def storage_fault(exc: BaseException, where: str | None = None) -> str | None:
    """The message for a storage failure somewhere in ``exc``'s chain, or None.
    ``where``: the store's file or URL (a password in it is masked)."""
    where = masked(where) if where and "://" in where else where
    seen: BaseException | None = exc
    while seen is not None:
        kind = _kind(seen)
        if kind == "corrupt" and _disk_fails(where):
            kind = "io"  # SQLite reads a failing disk's pages as damaged: the disk it is
        if kind == "cantopen":  # a read-only mount, or no such folder (a usage error)
            kind = "readonly" if _read_only_mount(where) else None
        if kind is not None:
            return _message(kind, seen, where)
        seen = seen.__cause__ or seen.__context__
    return None


def _read_only_mount(where: str | None) -> bool:
    if not where or "://" in where:
        return False
    try:
        return bool(os.statvfs(os.path.dirname(where) or ".").f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _disk_fails(where: str | None) -> bool:
    """Whether the store's file system fails to read at all (shut down, gone, EIO)."""
    if not where or "://" in where:
        return False
    try:
        with open(where, "rb") as handle:
            handle.read(4096)
        os.statvfs(os.path.dirname(where) or ".")
    except OSError as exc:
        return exc.errno in (errno.EIO, errno.ENODEV, errno.ENXIO, errno.ESHUTDOWN)
    return False


def _kind(exc: BaseException) -> str | None:
    if isinstance(exc, StoreCorruptError):
        return "corrupt"
    if isinstance(exc, sqlite3.Error):
        return _sqlite_kind(exc)
    if isinstance(exc, OSError):
        return {
            errno.ENOSPC: "full",
            errno.EDQUOT: "full",
            errno.EROFS: "readonly",
            errno.EIO: "io",
        }.get(exc.errno or 0)
    state = getattr(exc, "sqlstate", None)
    if isinstance(state, str):
        return {"53100": "full", "25006": "readonly", "58030": "io", "55P03": "locked"}.get(state)
    return None


def _sqlite_kind(exc: sqlite3.Error) -> str | None:
    if damaged(exc):
        return "corrupt"
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc).lower()
    if primary == _FULL or "database or disk is full" in text:
        return "full"
    if primary == _READONLY or "readonly database" in text:
        return "readonly"
    if primary == _CANTOPEN or "unable to open database file" in text:
        return "cantopen"
    if primary == _IOERR or "disk i/o error" in text:
        return "io"
    if primary in (_BUSY, _LOCKED) or "database is locked" in text:
        return "locked"
    return None


def _message(kind: str, exc: BaseException, where: str | None) -> str:
    place = f"the store at {where}" if where else "the store"
    if kind == "corrupt":
        return (
            corrupt_message(where or "?", [str(exc)]) if not isinstance(exc, StoreCorruptError) else str(exc)
        )
    if kind == "full":
        return f"{place}: the disk is full ({exc}). Free space on that disk (or move the store). " + _RESUME
    if kind == "readonly":
        return (
            f"{place} cannot be written: the file or its file system is read-only ({exc}). Check "
            "the file's permissions and the mount (a file system remounted read-only after disk "
            "errors needs fsck), or pass --db a writable path. " + _RESUME
        )
    if kind == "io":
        return (
            f"{place}: the disk failed to read or write ({exc}). Check the disk (dmesg), then "
            f"`assay store check --full` before going on. " + _RESUME
        )
    holders = _holders(where)
    held = f" (held by {holders})" if holders else ""
    return (
        f"{place} is locked by another process{held} and stayed locked past the wait "
        f"({exc}). Let that process finish, or stop it. " + _RESUME
    )


def _holders(where: str | None) -> str:
    """The other processes of this machine with the store's file open (from /proc)."""
    if not where or not os.path.exists(where):
        return ""
    target = os.path.realpath(where)
    found: list[str] = []
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
    except OSError:
        return ""
    for pid in pids:
        if _has_open(pid, target):
            found.append(f"pid {pid} ({_command(pid)})")
        if len(found) == 5:
            break
    return ", ".join(found)


def _has_open(pid: str, target: str) -> bool:
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in descriptors:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                return True
        except OSError:
            continue
    return False


def _command(pid: str) -> Any:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace").strip()[:80]
    except OSError:
        return "?"
