"""A finished run's end through the SQLite writer process is one transaction: its last
rows, the final figures and the mark that the experiment's metric columns are being built;
the process then builds them as it stops, with no commit of its own for the mark."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from assay import Client, evaluate
from assay.store import _columns as columns
from assay.store.sqlite import _writer_process
from assay.store.sqlite._writer import SPAWN_AFTER_ROWS, StatementLog
from assay.store.sqlite._writer_process import WriterProcess


def _target(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"y": inputs["x"]}


def _right(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> bool:
    return bool(outputs == reference_outputs)


def _evaluated(client: Client, n: int) -> Any:
    data = [{"inputs": {"x": i}, "outputs": {"y": i}} for i in range(n)]
    return evaluate(_target, data=data, evaluators=[_right], client=client, progress=False)


def test_the_last_batch_carries_the_final_figures_and_the_columns_mark(
    tmp_path: Path, monkeypatch: Any
) -> None:
    commits: list[list[str]] = []
    closes: list[dict[str, Any]] = []
    commit, close_building = WriterProcess.commit, WriterProcess.close_building_columns

    def committing(self: WriterProcess, statements: list[tuple[str, Any, Any]]) -> None:
        commits.append([sql for sql, _, _ in statements])
        commit(self, statements)

    def closing(self: WriterProcess, experiment_id: str, **kwargs: Any) -> bool:
        closes.append(kwargs)
        return close_building(self, experiment_id, **kwargs)

    monkeypatch.setattr(WriterProcess, "commit", committing)
    monkeypatch.setattr(WriterProcess, "close_building_columns", closing)
    n = 3 * SPAWN_AFTER_ROWS
    client = Client(str(tmp_path / "end.db"))
    results = _evaluated(client, n)
    experiment_id = str(client.store.get_experiment(name=results.experiment_name).id)  # type: ignore[union-attr]
    client.close()
    _writer_process._wait_for_builders(None)  # the process built the columns and exited

    assert commits, "the rows went through the writer process"
    last = commits[-1]
    assert any("INSERT INTO metric_column_sets" in sql for sql in last)  # the mark, with the rows
    assert any("experiment_stats" in sql for sql in last)  # the final figures, with the rows
    assert closes == [{"marked": True}]
    with sqlite3.connect(tmp_path / "end.db") as conn:
        final, rows = conn.execute(
            "SELECT final, row_count FROM experiment_stats WHERE experiment_id = ?", (experiment_id,)
        ).fetchone()
        built = conn.execute(
            "SELECT runs, built_at FROM metric_column_sets WHERE experiment_id = ?", (experiment_id,)
        ).fetchone()
        assert (final, rows) == (1, n)
        assert built[0] == n and built[1] is not None  # built by the process, not left pending
        loaded = columns.load(conn, experiment_id)
    assert loaded is not None and loaded.runs == n


def test_on_postgres_the_last_batch_marks_the_columns_in_its_transaction(
    postgres_store_url: str, monkeypatch: Any
) -> None:
    from assay.store.postgres import _batch

    marks: list[bool] = []  # for each mark: whether it was made inside a batch's transaction
    in_batch = [False]
    write_batch, mark_pending = _batch.write_batch, _batch.columns.mark_pending

    def writing(*args: Any, **kwargs: Any) -> None:
        in_batch[0] = True
        try:
            write_batch(*args, **kwargs)
        finally:
            in_batch[0] = False

    def marking(conn: Any, experiment_id: str) -> None:
        # in a batch written here, or among a batch's statements for the writer process
        marks.append(in_batch[0] or isinstance(conn, StatementLog))
        mark_pending(conn, experiment_id)

    monkeypatch.setattr(_batch, "write_batch", writing)
    monkeypatch.setattr("assay.store.postgres.pipelined_write_batch", writing)
    monkeypatch.setattr(_batch.columns, "mark_pending", marking)
    n = 1200
    client = Client(postgres_store_url)
    results = _evaluated(client, n)
    for thread in threading.enumerate():
        if thread.name == "assay-columns":
            thread.join()
    assert marks == [True]  # once, with the last rows: no transaction of its own
    record = client.store.get_experiment(name=results.experiment_name)
    assert record is not None
    loaded = columns.load(client.store.conn, str(record.id))  # type: ignore[attr-defined]
    assert loaded is not None and loaded.runs == n
    client.close()
