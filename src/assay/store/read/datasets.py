"""Datasets and their (versioned) examples, as the UI lists and pages them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.store.read.database import ReadOnlyDatabase
from assay.store.read.sql import like_pattern, record, records, version_clause

__all__ = [
    "DatasetRecord",
    "ExampleRecord",
    "VersionChange",
    "example_count",
    "examples",
    "experiments_on",
    "find",
    "listed",
    "versions",
]


@dataclass(frozen=True, slots=True)
class DatasetRecord:
    id: str
    name: str
    description: str | None
    created_at: str | None
    version: int
    example_count: int  # in the current version
    experiment_count: int


@dataclass(frozen=True, slots=True)
class ExampleRecord:
    """An example; its JSON columns as stored text."""

    id: str
    position: int
    inputs: str | None
    outputs: str | None
    metadata: str | None
    added_version: int
    created_at: str | None


@dataclass(frozen=True, slots=True)
class VersionChange:
    v: int
    added: int  # examples added or edited in this version
    removed: int  # examples removed or replaced in it


_SUMMARY = """
SELECT d.id, d.name, d.description, d.created_at, d.version,
       (SELECT COUNT(*) FROM examples e WHERE e.dataset_id = d.id AND e.removed_version IS NULL)
           AS example_count,
       (SELECT COUNT(*) FROM experiments x WHERE x.dataset_id = d.id) AS experiment_count
FROM datasets d
"""


def listed(db: ReadOnlyDatabase) -> list[DatasetRecord]:
    """Every dataset, newest first."""
    return records(DatasetRecord, db.query(_SUMMARY + " ORDER BY d.created_at DESC, d.name"))


def find(db: ReadOnlyDatabase, ref: str) -> DatasetRecord | None:
    """A dataset by id or by name."""
    return record(DatasetRecord, db.query_one(_SUMMARY + " WHERE d.id = ? OR d.name = ? LIMIT 1", (ref, ref)))


def _where(dataset_id: str, version: int | None, q: str | None) -> tuple[str, list[Any]]:
    alive, alive_params = version_clause("e", version)
    where = f"e.dataset_id = ? AND {alive}"
    params: list[Any] = [dataset_id, *alive_params]
    if q:
        where += (
            " AND (e.id = ? OR e.inputs LIKE ? ESCAPE '\\' OR e.outputs LIKE ? ESCAPE '\\' "
            "OR e.metadata LIKE ? ESCAPE '\\')"
        )
        pattern = like_pattern(q)
        params += [q, pattern, pattern, pattern]
    return where, params


def example_count(db: ReadOnlyDatabase, dataset_id: str, *, version: int | None, q: str | None) -> int:
    """Examples alive at ``version`` (None: the current one) whose id is ``q`` or whose
    inputs, outputs or metadata text hold it."""
    where, params = _where(dataset_id, version, q)
    return int(db.query(f"SELECT COUNT(*) FROM examples e WHERE {where}", params)[0][0])


def examples(
    db: ReadOnlyDatabase, dataset_id: str, *, version: int | None, q: str | None, limit: int, offset: int
) -> list[ExampleRecord]:
    """A page of the examples ``example_count`` counts, in dataset order."""
    where, params = _where(dataset_id, version, q)
    rows = db.query(
        "SELECT e.id, e.position, e.inputs, e.outputs, e.metadata, e.added_version, e.created_at "
        f"FROM examples e WHERE {where} ORDER BY e.position LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )
    return records(ExampleRecord, rows)


def versions(db: ReadOnlyDatabase, dataset_id: str) -> list[VersionChange]:
    """Per version, newest first, how many examples it added and removed."""
    rows = db.query(
        """
        SELECT v, SUM(added) AS added, SUM(removed) AS removed FROM (
            SELECT added_version AS v, 1 AS added, 0 AS removed FROM examples WHERE dataset_id = ?
            UNION ALL
            SELECT removed_version, 0, 1 FROM examples
            WHERE dataset_id = ? AND removed_version IS NOT NULL
        ) AS changes GROUP BY v ORDER BY v DESC
        """,
        (dataset_id, dataset_id),
    )
    return records(VersionChange, rows)


def experiments_on(db: ReadOnlyDatabase, dataset_id: str) -> list[tuple[str, str]]:
    """(id, name) of the experiments on the dataset, newest first."""
    rows = db.query(
        "SELECT id, name FROM experiments WHERE dataset_id = ? ORDER BY created_at DESC", (dataset_id,)
    )
    return [(row["id"], row["name"]) for row in rows]
