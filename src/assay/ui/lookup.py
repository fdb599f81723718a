"""Resolving the datasets and experiments named in a URL, or answering 404."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from assay.store.read.database import ReadOnlyDatabase
from assay.ui.errors import NotFound
from assay.ui.models import DatasetSummary, ExperimentSummary
from assay.ui.queries import find_dataset, find_experiment

__all__ = [
    "Database",
    "DatasetParam",
    "ExperimentParam",
    "database",
    "dataset",
    "experiment",
    "experiments",
]


def database(request: Request) -> ReadOnlyDatabase:
    db: ReadOnlyDatabase = request.app.state.db
    return db


Database = Annotated[ReadOnlyDatabase, Depends(database)]


def experiment(ref: str, db: Database) -> ExperimentSummary:
    found = find_experiment(db, ref)
    if found is None:
        raise NotFound(f"no experiment with id or name {ref!r}")
    return found


def dataset(ref: str, db: Database) -> DatasetSummary:
    found = find_dataset(db, ref)
    if found is None:
        raise NotFound(f"no dataset with id or name {ref!r}")
    return found


def experiments(refs: list[str], db: ReadOnlyDatabase) -> list[ExperimentSummary]:
    return [experiment(ref, db) for ref in refs]


ExperimentParam = Annotated[ExperimentSummary, Depends(experiment)]
DatasetParam = Annotated[DatasetSummary, Depends(dataset)]
