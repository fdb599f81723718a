"""Experiments with chosen cells, written through the store, and a field-by-field
comparison of two ``Comparison`` values."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from assay.comparison import Comparison
from assay.comparison._compare import compare_experiments
from assay.schemas import Dataset, EvaluationResult, Example, Run
from assay.store import _columns as columns
from assay.store.records import ExperimentRecord, ExperimentRow
from assay.store.sqlite import SQLiteStore

# A cell: a score; "error" (the evaluator failed); "value" (a result with no score);
# "dup:<a>,<b>" (two results of the metric on one row); None (no result).
Cell = float | str | None
LOWER = "low"  # the metric key declared lower-is-better


def dataset(store: SQLiteStore, n: int) -> tuple[Dataset, list[Example]]:
    ds = store.create_dataset(f"d{len(store.list_datasets())}")
    examples = [Example(dataset_id=ds.id, inputs={"i": i}, outputs={"o": i}) for i in range(n)]
    store.add_examples(ds.id, examples)
    return ds, examples


def experiment(
    store: SQLiteStore,
    ds: Dataset,
    examples: list[Example],
    name: str,
    rows: dict[tuple[int, int], tuple[bool, dict[str, Cell]]],  # (example, rep) -> (target failed, cells)
    status: str = "completed",
) -> ExperimentRecord:
    """An experiment holding exactly ``rows``; a failed target's results are skipped ones."""
    record = ExperimentRecord(
        name=name,
        dataset_id=ds.id,
        dataset_version=ds.version or 1,
        num_examples=len(examples),
        num_repetitions=max((rep for _, rep in rows), default=0) + 1,
    )
    store.create_experiment(record)
    written = []
    for (position, repetition), (failed, cells) in sorted(rows.items()):
        run = Run(
            inputs=examples[position].inputs,
            outputs=None if failed else {"o": 1},
            error="RuntimeError: target failed" if failed else None,
        )
        results = [r for key, cell in cells.items() for r in _results(key, cell, failed)]
        written.append(
            ExperimentRow(
                run=run, example=examples[position], repetition=repetition, position=position, results=results
            )
        )
    store.write_rows(record.id, written)
    if status != "running":
        store.finish_experiment(record.id, status)
    return store.get_experiment(id=record.id) or record


def _results(key: str, cell: Cell, failed: bool) -> list[EvaluationResult]:
    extra: dict[str, Any] = {"direction": "lower"} if key == LOWER else {}
    if cell is None:
        return []
    if failed:
        return [EvaluationResult(key=key, metadata={"skipped": True}, **extra)]
    if cell == "error":
        return [EvaluationResult(key=key, error="ValueError: evaluator broke", **extra)]
    if cell == "value":
        return [EvaluationResult(key=key, value="no score", **extra)]
    if isinstance(cell, str) and cell.startswith("dup:"):
        return [EvaluationResult(key=key, score=float(s), **extra) for s in cell[4:].split(",")]
    return [EvaluationResult(key=key, score=float(cell), **extra)]


def by_sql(store: SQLiteStore, a: ExperimentRecord, b: ExperimentRecord, **options: Any) -> Comparison:
    """The comparison the SQL path gives: the columns dropped first."""
    with store.transaction() as conn:
        columns.invalidate(conn, [str(a.id), str(b.id)])
    with store.snapshot() as conn:
        return compare_experiments(conn, a, b, **options)


def has_columns(store: SQLiteStore, record: ExperimentRecord) -> bool:
    return columns.load(store.conn, str(record.id), keys=[]) is not None


def assert_same(left: Any, right: Any, where: str = "comparison") -> None:
    """Equal field by field; floats to 1e-12 relative (NaN equals NaN)."""
    if isinstance(left, Comparison):
        left, right = asdict(left), asdict(right)
    if isinstance(left, dict):
        assert isinstance(right, dict) and left.keys() == right.keys(), where
        for key in left:
            assert_same(left[key], right[key], f"{where}.{key}")
    elif isinstance(left, (list, tuple)):
        assert isinstance(right, (list, tuple)) and len(left) == len(right), f"{where}: {left} != {right}"
        for i, (x, y) in enumerate(zip(left, right)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(left, float) and isinstance(right, float):
        assert (math.isnan(left) and math.isnan(right)) or math.isclose(
            left, right, rel_tol=1e-12, abs_tol=1e-12
        ), f"{where}: {left!r} != {right!r}"
    else:
        assert type(left) is type(right) and left == right, f"{where}: {left!r} != {right!r}"


def stored_one_per_row(store: SQLiteStore, record: ExperimentRecord, key: str) -> bool | None:
    return columns.one_result_per_row(store.conn, str(record.id), key)
