"""Stores of a million rows in minutes, for the benchmarks that read them.

The rows are the ones ``evaluate`` writes (a run, its example, its results), encoded by
``Store.prepare_row`` and written by ``Store.write_prepared`` in batches, the path the
runner's writer takes; what is skipped is calling a target and evaluators for each row.
Examples stream in and out: nothing holds more than a batch, so 2 x 1M rows build in a
bounded memory. Example ids are derived from the position, so every experiment of a
store pairs with the same examples without reading them back.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

from assay.schemas import EvaluationResult, Example, Run
from assay.store import Store
from assay.store.records import ExperimentRecord, ExperimentRow

BATCH = 5000
WHAT = (
    "rows written through Store.prepare_row + Store.write_prepared (the runner's writer path), "
    "the same rows evaluate would write, without calling a target or evaluators"
)

ExampleMaker = Callable[[int, Any], Example]
RowMaker = Callable[[Example], tuple[Run, list[EvaluationResult]]]


def example_id(position: int) -> uuid.UUID:
    return uuid.UUID(int=position + 1)


# A row's latency as a hash of its position: 0-39.99 ms in 4,000 distinct values, so that
# a sort by latency meets ties (250 rows each at 1M) as a fast target's timings do.
LATENCY_SQL = "((position * 2654435761) % 4000) / 100.0"


def latency_ms(position: int) -> float:
    return ((position * 2654435761) % 4000) / 100.0


def timed_run(position: int, **fields: Any) -> Run:
    """A run that started now and took ``latency_ms(position)``, as evaluate times one."""
    start = datetime.now(timezone.utc)
    return Run(start_time=start, end_time=start + timedelta(milliseconds=latency_ms(position)), **fields)


def add_dataset(store: Store, name: str, rows: int, make_example: ExampleMaker) -> Any:
    """A dataset of ``rows`` examples, streamed into the store."""
    dataset = store.create_dataset(name)
    store.add_examples(dataset.id, (make_example(i, dataset.id) for i in range(rows)))
    return dataset.id


def add_experiment(
    store: Store,
    name: str,
    dataset_id: Any,
    rows: int,
    make_example: ExampleMaker,
    make_row: RowMaker,
) -> str:
    """A finished experiment of ``rows`` rows (one repetition) on the dataset."""
    record = ExperimentRecord(
        name=name, dataset_id=dataset_id, dataset_version=1, num_examples=rows, status="running"
    )
    store.create_experiment(record)
    for batch in _batches(record.id, dataset_id, rows, make_example, make_row, store):
        store.write_prepared(batch)
    store.finish_experiment(record.id, "completed")
    return str(record.id)


def _batches(
    experiment_id: Any,
    dataset_id: Any,
    rows: int,
    make_example: ExampleMaker,
    make_row: RowMaker,
    store: Store,
) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for position in range(rows):
        example = make_example(position, dataset_id)
        run, results = make_row(example)
        row = ExperimentRow(run=run, example=example, repetition=0, position=position, results=results)
        batch.append(store.prepare_row(experiment_id, row))
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch
