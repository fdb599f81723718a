"""The SQL of example attachments (``blobs`` and ``example_attachments``), for both
backends: a blob per content, linked to example versions by their row's ``pk``."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from assay.errors import NotFoundError
from assay.schemas import utcnow
from assay.store import _codec as codec
from assay.store.attachments import AttachmentData, StoredAttachment, given_attachments

__all__ = [
    "Loader",
    "attachments_by_pk",
    "attachments_of_ids",
    "attachments_of_positions",
    "blob",
    "blobs_of_dataset",
    "collect_garbage",
    "copy_links",
    "has_any",
    "link",
]

Loader = Callable[[str], bytes]
"""Reads a blob's bytes by its SHA-256 (the store's ``read_attachment``)."""

_LINK_COLUMNS = "example_pk, name, dataset_id, mime_type, sha256, size"


def link(conn: Any, dataset_id: str, pk: int, example_id: str, attachments: Mapping[str, Any]) -> None:
    """Store ``attachments`` (any given shape) as the example version ``pk``'s files:
    each blob once (an existing one is reused), then the links."""
    made = given_attachments(attachments, example_id) or {}
    for name, value in made.items():
        _keep_blob(conn, value)
        conn.execute(
            f"INSERT INTO example_attachments ({_LINK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            (pk, name, dataset_id, value.mime_type, value.sha256, value.size),
        )


def _keep_blob(conn: Any, value: AttachmentData | StoredAttachment) -> None:
    if isinstance(value, StoredAttachment):
        # read back from a store: this one has its bytes unless it is another store
        if conn.execute("SELECT 1 FROM blobs WHERE sha256 = ?", (value.sha256,)).fetchone():
            return
    conn.execute(
        "INSERT INTO blobs (sha256, size, data, created_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (sha256) DO NOTHING",
        (value.sha256, len(value.data), value.data, codec.ts(utcnow())),
    )


def copy_links(conn: Any, old_pk: int, new_pk: int) -> None:
    """The new version of an example keeps the files of the version it replaces."""
    conn.execute(
        f"INSERT INTO example_attachments ({_LINK_COLUMNS}) "
        "SELECT ?, name, dataset_id, mime_type, sha256, size FROM example_attachments WHERE example_pk = ?",
        (new_pk, old_pk),
    )


def blobs_of_dataset(conn: Any, dataset_id: str) -> list[str]:
    rows = conn.execute(
        "SELECT DISTINCT sha256 FROM example_attachments WHERE dataset_id = ?", (dataset_id,)
    ).fetchall()
    return [row[0] for row in rows]


def collect_garbage(conn: Any, candidates: Sequence[str]) -> int:
    """Delete the blobs among ``candidates`` that no example version links any more."""
    deleted = 0
    for start in range(0, len(candidates), 500):
        chunk = list(candidates[start : start + 500])
        marks = ", ".join("?" * len(chunk))
        deleted += conn.execute(
            f"DELETE FROM blobs WHERE sha256 IN ({marks}) AND NOT EXISTS "
            "(SELECT 1 FROM example_attachments a WHERE a.sha256 = blobs.sha256)",
            chunk,
        ).rowcount
    return deleted


def has_any(conn: Any, dataset_id: str) -> bool:
    """Whether any version of the dataset has files (one index probe)."""
    found = conn.execute(
        "SELECT 1 FROM example_attachments WHERE dataset_id = ? LIMIT 1", (dataset_id,)
    ).fetchone()
    return found is not None


def attachments_by_pk(conn: Any, pks: Iterable[int], load: Loader) -> dict[int, dict[str, StoredAttachment]]:
    """The files of the example versions ``pks``, by version and name (in name order)."""
    found: dict[int, dict[str, StoredAttachment]] = {}
    made = _Shared(load)
    wanted = list(pks)
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        rows = conn.execute(
            f"SELECT example_pk, name, mime_type, sha256, size FROM example_attachments "
            f"WHERE example_pk IN ({marks}) ORDER BY example_pk, name",
            chunk,
        ).fetchall()
        for pk, name, mime_type, sha256, size in rows:
            found.setdefault(pk, {})[name] = made(mime_type, size, sha256)
    return found


def attachments_of_positions(
    conn: Any, dataset_id: str, alive: tuple[str, tuple[Any, ...]], first: int, last: int, load: Loader
) -> dict[str, dict[str, StoredAttachment]]:
    """The files of a page of examples (positions ``first`` to ``last`` alive at a
    version), by example id."""
    condition, params = alive
    rows = conn.execute(
        "SELECT e.id, a.name, a.mime_type, a.sha256, a.size FROM example_attachments a "
        "JOIN examples e ON e.pk = a.example_pk "
        f"WHERE e.dataset_id = ? AND e.position >= ? AND e.position <= ? AND {condition} "
        "ORDER BY e.position, a.name",
        (dataset_id, first, last, *params),
    ).fetchall()
    found: dict[str, dict[str, StoredAttachment]] = {}
    made = _Shared(load)
    for example_id, name, mime_type, sha256, size in rows:
        found.setdefault(example_id, {})[name] = made(mime_type, size, sha256)
    return found


def attachments_of_ids(
    conn: Any, dataset_id: str, alive: tuple[str, tuple[Any, ...]], ids: Sequence[str], load: Loader
) -> dict[str, dict[str, StoredAttachment]]:
    """The files of the examples ``ids`` alive at a version, by example id."""
    condition, params = alive
    found: dict[str, dict[str, StoredAttachment]] = {}
    made = _Shared(load)
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ", ".join("?" * len(chunk))
        rows = conn.execute(
            "SELECT e.id, a.name, a.mime_type, a.sha256, a.size FROM example_attachments a "
            "JOIN examples e ON e.pk = a.example_pk "
            f"WHERE e.dataset_id = ? AND e.id IN ({marks}) AND {condition} ORDER BY e.id, a.name",
            (dataset_id, *chunk, *params),
        ).fetchall()
        for example_id, name, mime_type, sha256, size in rows:
            found.setdefault(example_id, {})[name] = made(mime_type, size, sha256)
    return found


def blob(conn: Any, sha256: str) -> bytes:
    row = conn.execute("SELECT data FROM blobs WHERE sha256 = ?", (sha256,)).fetchone()
    if row is None:
        raise NotFoundError(
            f"no stored attachment with SHA-256 {sha256}: the dataset that held it was deleted"
        )
    return bytes(row[0])


class _Shared:
    """One ``StoredAttachment`` per content and type within a read: examples that share
    a file share its bytes, read from the store once."""

    def __init__(self, load: Loader) -> None:
        self._load = load
        self._made: dict[tuple[str, str], StoredAttachment] = {}

    def __call__(self, mime_type: str, size: int, sha256: str) -> StoredAttachment:
        key = (sha256, mime_type)
        found = self._made.get(key)
        if found is None:
            found = self._made[key] = StoredAttachment(
                mime_type, size, sha256, functools.partial(self._load, sha256)
            )
        return found
