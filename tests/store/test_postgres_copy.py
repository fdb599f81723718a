"""PostgreSQL takes a batch of rows by ``COPY``: one stream per table, not a statement per
row, with the same rows stored (text that COPY's format must escape included) and the
same all-or-nothing batch."""

from __future__ import annotations

import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest

from assay import Client
from assay.errors import LeaseFencedError
from assay.schemas import EvaluationResult, Example, Run
from assay.store import _codec as codec
from assay.store import open_store
from assay.store.fence import Fence
from assay.store.records import ExperimentRecord, ExperimentRow, ExperimentStats

# What COPY's text format gives a meaning to: tab, newline, carriage return, backslash,
# its NULL marker and end-of-data line; and text beyond ASCII.
ODD = "a\tb\nc\rd\\e \\N \\. \n\\.\n é 中 \U0001f600"


def _batch(store: Any, rows: int) -> tuple[ExperimentRecord, list[Any]]:
    dataset = store.create_dataset(f"d-{uuid.uuid4().hex[:6]}")
    record = ExperimentRecord(
        name=f"e-{uuid.uuid4().hex[:6]}", dataset_id=dataset.id, dataset_version=1, num_examples=rows
    )
    store.create_experiment(record)
    examples = [Example(dataset_id=dataset.id, inputs={"q": ODD}, outputs={"a": i}) for i in range(rows)]
    store.add_examples(dataset.id, examples)
    prepared = []
    for position, example in enumerate(examples):
        run = Run(inputs=example.inputs, outputs={"a": ODD}, error=None if position % 2 else ODD)
        results = [
            EvaluationResult(key=ODD, score=True, comment=ODD),
            EvaluationResult(key="n", score=position, value={"v": ODD}),
        ]
        row = ExperimentRow(run=run, example=example, repetition=0, position=position, results=results)
        prepared.append(store.prepare_row(record.id, row))
    return record, prepared


def _frontend_messages(trace: Path) -> list[str]:
    """The message types the client sent, from libpq's trace (``F <length> <Type> ...``)."""
    return [line.split("\t")[2] for line in trace.read_text().splitlines() if line.startswith("F\t")]


def test_a_batch_is_one_copy_per_table_not_a_statement_per_row(postgres_store_url: str) -> None:
    store = open_store(postgres_store_url)
    record, prepared = _batch(store, 200)
    conn = store.conn.raw  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "trace"
        with trace.open("w") as out:
            conn.pgconn.trace(out.fileno())
            conn.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
            store.write_batch(record.id, prepared, None)
            conn.pgconn.untrace()
        sent = _frontend_messages(trace)
    # 200 runs and 400 results: as statements, a Bind and an Execute each (600+)
    assert sent.count("Bind") + sent.count("Query") < 20, sent[:40]
    assert sent.count("CopyData") >= 2 and sent.count("CopyDone") == 2
    assert store.conn.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 400
    store.close()


def test_a_batch_behind_its_lease_with_figures_waits_for_the_server_six_times(
    postgres_store_url: str,
) -> None:
    """BEGIN and the fence in one pipeline, each COPY's start and end, then the
    invalidations, the figures and COMMIT in one pipeline (a statement at a time: 11)."""
    store = open_store(postgres_store_url)
    record, prepared = _batch(store, 50)
    token = uuid.uuid4().hex
    store.take_lease(record.id, 0, 1, host="here", pid=1, token=token, ttl=600)
    stats = ExperimentStats(rows=50, run_errors=25)
    conn = store.conn.raw  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "trace"
        with trace.open("w") as out:
            conn.pgconn.trace(out.fileno())
            conn.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
            store.write_batch(record.id, prepared, stats, Fence(record.id, 0, token))
            conn.pgconn.untrace()
        sent = _frontend_messages(trace)
    # what the client then waits on: a pipeline's Sync, a simple Query (COPY's start), CopyDone
    assert sent.count("Sync") + sent.count("Query") + sent.count("CopyDone") == 6, sent
    assert store.count_rows(record.id) == 50 and store.load_stats(record.id).rows == 50  # type: ignore[union-attr]
    store.close()


def test_a_batch_whose_lease_was_taken_over_sends_no_row_and_leaves_the_connection_usable(
    postgres_store_url: str,
) -> None:
    store = open_store(postgres_store_url)
    record, prepared = _batch(store, 20)
    store.take_lease(record.id, 0, 1, host="here", pid=1, token="mine", ttl=600)
    store.take_lease(record.id, 0, 1, host="there", pid=2, token="theirs", ttl=600, stale_token="mine")
    with pytest.raises(LeaseFencedError):
        store.write_batch(record.id, prepared, None, Fence(record.id, 0, "mine"))
    assert store.count_rows(record.id) == 0
    store.write_batch(record.id, prepared, None, Fence(record.id, 0, "theirs"))  # the same connection
    assert store.count_rows(record.id) == 20
    store.close()


def test_copied_rows_read_back_as_sqlite_stores_them(postgres_store_url: str, tmp_path: Path) -> None:
    def stored(url: str) -> list[tuple[Any, ...]]:
        store = open_store(url)
        record, prepared = _batch(store, 6)
        store.write_batch(record.id, prepared, None)
        rows = [
            (row.position, row.run.inputs, row.run.outputs, row.run.error, row.example.inputs,
             [(r.key, r.score, r.comment, r.value) for r in row.results])
            for row in store.load_rows(record)
        ]  # fmt: skip
        store.close()
        return rows

    on_postgres = stored(postgres_store_url)
    assert on_postgres == stored(f"sqlite:///{tmp_path / 'lite.db'}")
    assert on_postgres[0][3] == ODD and on_postgres[0][5][0] == (ODD, True, ODD, None)


def test_a_nul_anywhere_in_a_batch_is_stored_as_postgresql_text_can_hold_it(postgres_store_url: str) -> None:
    """Most batches go to COPY as encoded; one holding a NUL (which PostgreSQL text cannot
    hold) has it written as the two characters ``\\0``, wherever it is."""
    store = open_store(postgres_store_url)
    record, prepared = _batch(store, 4)
    run, results = codec.encoded(prepared[3])  # as pickled by the row's thread, encoded
    prepared[3] = (run[:9] + ("late\x00error",) + run[10:], [results[0][:6] + ("a\x00b",) + results[0][7:]])
    store.write_batch(record.id, prepared, None)
    last = store.load_rows(record)[3]
    assert last.run.error == "late\\0error" and last.results[0].comment == "a\\0b"
    store.close()


def test_a_batch_with_a_duplicate_run_stores_none_of_its_rows(postgres_store_url: str) -> None:
    store = open_store(postgres_store_url)
    record, prepared = _batch(store, 10)
    store.write_batch(record.id, prepared[:3], None)
    with pytest.raises(psycopg.errors.UniqueViolation):
        store.write_batch(record.id, prepared[3:] + prepared[:1], None)  # the first run again
    counts = store.conn.execute(
        "SELECT (SELECT COUNT(*) FROM runs), (SELECT COUNT(*) FROM results)"
    ).fetchone()
    assert tuple(counts) == (3, 6)
    store.close()


def test_an_evaluation_on_postgres_stores_every_row(postgres_store_url: str) -> None:
    client = Client(postgres_store_url)
    data = [{"inputs": {"x": i}, "outputs": {"y": 2 * i}} for i in range(1200)]
    results = client.evaluate(
        lambda inputs: {"y": 2 * inputs["x"]},
        data=data,
        evaluators=[lambda outputs, reference_outputs: outputs == reference_outputs],
    )
    again = client.read_experiment(results.experiment_name)
    assert [row["run"].outputs["y"] for row in again] == [2 * i for i in range(1200)]
    client.close()


def test_an_evaluation_leaves_its_columns_to_a_thread_that_builds_them(postgres_store_url: str) -> None:
    client = Client(postgres_store_url)
    data = [{"inputs": {"x": i}, "outputs": {"y": 2 * i}} for i in range(300)]
    results = client.evaluate(
        lambda inputs: {"y": 2 * inputs["x"]},
        data=data,
        evaluators=[lambda outputs, reference_outputs: outputs == reference_outputs],
    )
    for thread in threading.enumerate():
        if thread.name == "assay-columns":
            thread.join()
    store = client.store
    record = store.get_experiment(name=results.experiment_name)
    assert record is not None
    built = store.conn.execute(
        "SELECT s.built_at IS NOT NULL, c.results FROM metric_column_sets s JOIN metric_columns c "
        "ON c.experiment_id = s.experiment_id WHERE s.experiment_id = ?",
        (str(record.id),),
    ).fetchall()
    assert [tuple(row) for row in built] == [(True, 300)]
    client.close()
