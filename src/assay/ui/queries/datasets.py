"""Datasets and their (versioned) examples."""

from __future__ import annotations

from typing import Any

from assay.store.read.database import ReadOnlyDatabase
from assay.ui.models import DatasetSummary, DatasetVersion, ExamplePage, ExampleView, ExperimentRef
from assay.ui.queries._sql import like_pattern, loads, offset, version_clause

__all__ = ["example_page", "find_dataset", "list_datasets"]


_SUMMARY = """
SELECT d.id, d.name, d.description, d.created_at, d.version,
       (SELECT COUNT(*) FROM examples e WHERE e.dataset_id = d.id AND e.removed_version IS NULL)
           AS example_count,
       (SELECT COUNT(*) FROM experiments x WHERE x.dataset_id = d.id) AS experiment_count
FROM datasets d
"""


def list_datasets(db: ReadOnlyDatabase) -> list[DatasetSummary]:
    return [_summary(row) for row in db.query(_SUMMARY + " ORDER BY d.created_at DESC, d.name")]


def find_dataset(db: ReadOnlyDatabase, ref: str) -> DatasetSummary | None:
    """A dataset by id or by name."""
    row = db.query_one(_SUMMARY + " WHERE d.id = ? OR d.name = ? LIMIT 1", (ref, ref))
    return _summary(row) if row else None


def example_page(
    db: ReadOnlyDatabase,
    dataset: DatasetSummary,
    *,
    version: int | None,
    q: str | None,
    page: int,
    per_page: int,
) -> ExamplePage:
    alive, alive_params = version_clause("e", version)
    where = f"e.dataset_id = ? AND {alive}"
    params: list[Any] = [dataset.id, *alive_params]
    if q:
        where += (
            " AND (e.id = ? OR e.inputs LIKE ? ESCAPE '\\' OR e.outputs LIKE ? ESCAPE '\\' "
            "OR e.metadata LIKE ? ESCAPE '\\')"
        )
        pattern = like_pattern(q)
        params += [q, pattern, pattern, pattern]
    total = db.query(f"SELECT COUNT(*) FROM examples e WHERE {where}", params)[0][0]
    rows = db.query(
        f"SELECT e.* FROM examples e WHERE {where} ORDER BY e.position LIMIT ? OFFSET ?",
        [*params, per_page, offset(page, per_page)],
    )
    return ExamplePage(
        dataset=dataset,
        version=dataset.version if version is None else version,
        versions=_versions(db, dataset.id),
        q=q,
        total=int(total),
        page=page,
        per_page=per_page,
        examples=[_example(row) for row in rows],
        experiments=_experiments_on(db, dataset.id),
    )


def _versions(db: ReadOnlyDatabase, dataset_id: str) -> list[DatasetVersion]:
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
    return [DatasetVersion(version=r["v"], added=r["added"], removed=r["removed"]) for r in rows]


def _experiments_on(db: ReadOnlyDatabase, dataset_id: str) -> list[ExperimentRef]:
    rows = db.query(
        "SELECT id, name FROM experiments WHERE dataset_id = ? ORDER BY created_at DESC",
        (dataset_id,),
    )
    return [ExperimentRef(id=row["id"], name=row["name"]) for row in rows]


def _summary(row: Any) -> DatasetSummary:
    return DatasetSummary(
        id=row["id"],
        name=row["name"],
        description=row["description"],
        created_at=row["created_at"],
        version=row["version"],
        example_count=row["example_count"],
        experiment_count=row["experiment_count"],
    )


def _example(row: Any) -> ExampleView:
    return ExampleView(
        id=row["id"],
        position=row["position"],
        inputs=loads(row["inputs"]),
        outputs=loads(row["outputs"]),
        metadata=loads(row["metadata"]),
        added_version=row["added_version"],
        created_at=row["created_at"],
    )
