"""An example's stored files as the UI reads them: the list of one example version's
files (name, MIME type, size), and one file's bytes."""

from __future__ import annotations

from dataclasses import dataclass

from assay.store.read.database import ReadOnlyDatabase

__all__ = ["StoredFile", "file_bytes", "files_by_example", "files_of"]


@dataclass(frozen=True)
class StoredFile:
    name: str
    mime_type: str
    size: int


def _at(version: int | None) -> tuple[str, tuple[object, ...]]:
    """The example version alive at ``version`` (None: the current one)."""
    if version is None:
        return "e.removed_version IS NULL", ()
    return "e.added_version <= ? AND (e.removed_version IS NULL OR e.removed_version > ?)", (version, version)


def files_of(db: ReadOnlyDatabase, dataset_id: str, example_id: str, version: int | None) -> list[StoredFile]:
    """The files of the example as it was at ``version`` (None: now), by name."""
    alive, params = _at(version)
    rows = db.query(
        "SELECT a.name, a.mime_type, a.size FROM example_attachments a JOIN examples e ON e.pk = a.example_pk "
        f"WHERE e.dataset_id = ? AND e.id = ? AND {alive} ORDER BY a.name",
        (dataset_id, example_id, *params),
    )
    return [StoredFile(row[0], row[1], int(row[2])) for row in rows]


def files_by_example(
    db: ReadOnlyDatabase, dataset_id: str, version: int | None, example_ids: list[str]
) -> dict[str, list[StoredFile]]:
    """The files of a page of examples at ``version`` (None: now), by example id."""
    if not example_ids:
        return {}
    alive, params = _at(version)
    marks = ", ".join("?" * len(example_ids))
    rows = db.query(
        "SELECT e.id, a.name, a.mime_type, a.size FROM example_attachments a "
        "JOIN examples e ON e.pk = a.example_pk "
        f"WHERE e.dataset_id = ? AND e.id IN ({marks}) AND {alive} ORDER BY e.id, a.name",
        (dataset_id, *example_ids, *params),
    )
    found: dict[str, list[StoredFile]] = {}
    for row in rows:
        found.setdefault(row[0], []).append(StoredFile(row[1], row[2], int(row[3])))
    return found


def file_bytes(
    db: ReadOnlyDatabase, dataset_id: str, example_id: str, version: int | None, name: str
) -> tuple[str, bytes] | None:
    """(MIME type, bytes) of one file of the example at ``version``, or None."""
    alive, params = _at(version)
    row = db.query_one(
        "SELECT a.mime_type, b.data FROM example_attachments a JOIN examples e ON e.pk = a.example_pk "
        "JOIN blobs b ON b.sha256 = a.sha256 "
        f"WHERE e.dataset_id = ? AND e.id = ? AND {alive} AND a.name = ?",
        (dataset_id, example_id, *params, name),
    )
    return None if row is None else (row[0], bytes(row[1]))
