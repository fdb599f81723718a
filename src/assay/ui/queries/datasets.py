"""Datasets and their (versioned) examples."""

from __future__ import annotations

from assay.store.read import datasets
from assay.store.read.database import ReadOnlyDatabase
from assay.ui.models import DatasetSummary, DatasetVersion, ExamplePage, ExampleView, ExperimentRef
from assay.ui.queries._sql import loads, offset

__all__ = ["example_page", "find_dataset", "list_datasets"]


def list_datasets(db: ReadOnlyDatabase) -> list[DatasetSummary]:
    return [_summary(row) for row in datasets.listed(db)]


def find_dataset(db: ReadOnlyDatabase, ref: str) -> DatasetSummary | None:
    """A dataset by id or by name."""
    found = datasets.find(db, ref)
    return _summary(found) if found else None


def example_page(
    db: ReadOnlyDatabase,
    dataset: DatasetSummary,
    *,
    version: int | None,
    q: str | None,
    page: int,
    per_page: int,
) -> ExamplePage:
    total = datasets.example_count(db, dataset.id, version=version, q=q)
    rows = datasets.examples(
        db, dataset.id, version=version, q=q, limit=per_page, offset=offset(page, per_page)
    )
    return ExamplePage(
        dataset=dataset,
        version=dataset.version if version is None else version,
        versions=[
            DatasetVersion(version=r.v, added=r.added, removed=r.removed)
            for r in datasets.versions(db, dataset.id)
        ],
        q=q,
        total=total,
        page=page,
        per_page=per_page,
        examples=[_example(row) for row in rows],
        experiments=[ExperimentRef(id=i, name=name) for i, name in datasets.experiments_on(db, dataset.id)],
    )


def _summary(row: datasets.DatasetRecord) -> DatasetSummary:
    return DatasetSummary(
        id=row.id,
        name=row.name,
        description=row.description,
        created_at=row.created_at,
        version=row.version,
        example_count=row.example_count,
        experiment_count=row.experiment_count,
    )


def _example(row: datasets.ExampleRecord) -> ExampleView:
    return ExampleView(
        id=row.id,
        position=row.position,
        inputs=loads(row.inputs),
        outputs=loads(row.outputs),
        metadata=loads(row.metadata),
        added_version=row.added_version,
        created_at=row.created_at,
    )
