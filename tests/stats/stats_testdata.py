"""Stored experiments with chosen scores, written through the store's public interface."""

from __future__ import annotations

from typing import Any

from assay.schemas import Dataset, EvaluationResult, Example, Run
from assay.store.base import Store
from assay.store.records import ExperimentRecord, ExperimentRow

Cell = float | bool | str | None  # a score, "error", "skip" (failed target), None: no result


def dataset(
    store: Store, n: int, metadata: list[dict[str, Any]] | None = None
) -> tuple[Dataset, list[Example]]:
    ds = store.create_dataset(f"d{n}-{len(store.list_datasets())}")
    examples = [
        Example(dataset_id=ds.id, inputs={"i": i}, outputs={"o": i}, metadata=(metadata or [{}] * n)[i])
        for i in range(n)
    ]
    store.add_examples(ds.id, examples)
    return ds, examples


def experiment(
    store: Store,
    ds: Dataset,
    examples: list[Example],
    name: str,
    scores: dict[str, list[list[Cell]]],  # key -> per example -> per repetition
    *,
    status: str = "completed",
    info: dict[str, dict[str, Any]] | None = None,
) -> ExperimentRecord:
    repetitions = max(len(per_rep) for per_key in scores.values() for per_rep in per_key)
    record = ExperimentRecord(
        name=name,
        dataset_id=ds.id,
        dataset_version=ds.version or 1,
        num_examples=len(examples),
        num_repetitions=repetitions,
    )
    store.create_experiment(record)
    rows = []
    for position, example in enumerate(examples):
        for repetition in range(repetitions):
            cells = {
                key: per_key[position][repetition] if repetition < len(per_key[position]) else None
                for key, per_key in scores.items()
            }
            failed = any(cell == "skip" for cell in cells.values())
            run = Run(
                inputs=example.inputs,
                outputs=None if failed else {"o": 1},
                error="RuntimeError: target failed" if failed else None,
            )
            results = [
                _result(key, cell, (info or {}).get(key)) for key, cell in cells.items() if cell is not None
            ]
            rows.append(
                ExperimentRow(
                    run=run, example=example, repetition=repetition, position=position, results=results
                )
            )
    store.write_rows(record.id, rows)
    if status != "running":
        store.finish_experiment(record.id, status)
    return record


def _result(key: str, cell: Cell, info: dict[str, Any] | None) -> EvaluationResult:
    extra: dict[str, Any] = dict(info or {})
    if cell == "error":
        return EvaluationResult(key=key, error="ValueError: evaluator broke", **extra)
    if cell == "skip":
        return EvaluationResult(key=key, metadata={"skipped": True}, **extra)
    return EvaluationResult(key=key, score=cell, **extra)
