"""A run's rows, kept as it produced them: summary evaluators and ``list(results)`` see the
same values whether a run hands over what it kept or they are read back from the store
(over budget, resumed), and a run large enough for the SQLite writer process has its
metric columns built there."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.evaluation import _kept
from assay.evaluation._kept import KeptRows
from assay.store import _columns as columns
from assay.store.sqlite._writer import SPAWN_AFTER_ROWS

ROWS = 700  # past the writer process's threshold


def _data(client: assay.Client, rows: int = ROWS) -> str:
    dataset = client.create_dataset("kept")
    client.create_examples(
        dataset_id=dataset.id,
        inputs=[{"x": i, "text": f"row {i} \ud800"} for i in range(rows)],
        outputs=[{"y": i * 2, "nan": float("nan") if i % 7 == 0 else i} for i in range(rows)],
    )
    return "kept"


def _target(inputs: dict[str, Any]) -> dict[str, Any]:
    time.sleep(0.0005 * (inputs["x"] % 3))  # rows finish out of order
    return {"y": inputs["x"] * 2, "tag": {1, inputs["x"]}, "text": inputs["text"]}


class Seen:
    def __init__(self) -> None:
        self.calls: list[dict[str, list[Any]]] = []

    def __call__(self, inputs: Any, outputs: Any, reference_outputs: Any) -> float:
        self.calls.append(
            {"inputs": list(inputs), "outputs": list(outputs), "reference_outputs": list(reference_outputs)}
        )
        return sum(o["y"] == r["y"] for o, r in zip(outputs, reference_outputs)) / len(outputs)


def _run(client: assay.Client, seen: Seen, **options: Any) -> assay.ExperimentResults:
    return assay.evaluate(
        _target,
        data="kept",
        summary_evaluators=[seen],
        client=client,
        progress=False,
        max_concurrency=8,
        **options,
    )


def _same(left: list[Any], right: list[Any]) -> bool:
    return repr(left) == repr(right)  # NaN and sets compared as written


@pytest.mark.parametrize("repetitions", [1, 2])
def test_kept_values_are_the_stored_values_in_data_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repetitions: int
) -> None:
    client = assay.Client(str(tmp_path / "k.db"))
    _data(client)
    seen = Seen()
    kept = _run(client, seen, num_repetitions=repetitions)
    monkeypatch.setattr(_kept, "MAX_ROWS", 10)  # over budget: read back from the store
    read_back = _run(client, seen, num_repetitions=repetitions)
    memory, store = seen.calls
    assert len(memory["outputs"]) == ROWS * repetitions
    for field in ("inputs", "outputs", "reference_outputs"):
        assert _same(memory[field], store[field]), field
    assert [o["y"] for o in memory["outputs"]] == [2 * i for i in range(ROWS) for _ in range(repetitions)]
    assert kept.summary_results.results[0].score == read_back.summary_results.results[0].score == 1.0
    client.close()


def test_a_budget_in_bytes_drops_what_was_kept() -> None:
    from assay.schemas import Example, Run
    from assay.store.records import ExperimentRow

    kept = KeptRows(max_bytes=100_000)
    example = Example(inputs={"x": 1})
    for position in range(64):
        run = Run(name="t", inputs={"x": 1}, outputs={"text": "x" * 1000})
        kept.add(ExperimentRow(example=example, run=run, results=[], position=position, repetition=0))
    assert kept.lists(64) == {} and kept.rows(64) is None


def test_a_resumed_run_reads_every_row_back(tmp_path: Path) -> None:
    client = assay.Client(str(tmp_path / "k.db"))
    _data(client, 40)
    seen = Seen()
    first = _run(client, seen, experiment="resumed")
    # drop half the rows, as a crash would have left them, and resume
    with client.store.transaction() as conn:  # type: ignore[attr-defined]
        conn.execute(
            "DELETE FROM results WHERE run_id IN (SELECT id FROM runs WHERE experiment_id = ? AND position >= 20)",
            (str(first.experiment.id),),  # type: ignore[union-attr]
        )
        conn.execute(
            "DELETE FROM runs WHERE experiment_id = ? AND position >= 20", (str(first.experiment.id),)
        )  # type: ignore[union-attr]
    _run(client, seen, experiment="resumed", resume=True)
    assert [o["y"] for o in seen.calls[-1]["outputs"]] == [2 * i for i in range(40)]
    client.close()


def test_the_writer_process_builds_the_columns_and_the_run_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert ROWS > SPAWN_AFTER_ROWS
    here: list[str] = []
    refresh = columns.refresh
    monkeypatch.setattr(
        columns,
        "refresh",
        lambda store, experiment_id: here.append(experiment_id) or refresh(store, experiment_id),
    )
    client = assay.Client(str(tmp_path / "k.db"))
    _data(client)

    def exact(outputs: Any, reference_outputs: Any) -> bool:
        return bool(outputs["y"] == reference_outputs["y"])

    def slow(inputs: dict[str, Any]) -> dict[str, Any]:
        time.sleep(0.002)  # long enough for the writer process to be ready
        return _target(inputs)

    results = [
        assay.evaluate(
            slow,
            data="kept",
            evaluators=[exact],
            client=client,
            progress=False,
            experiment=name,
            max_concurrency=2,
        )
        for name in ("a", "b")
    ]
    assert here == []  # neither built in this process
    store = client.store
    deadline = time.monotonic() + 30
    ids = [str(r.experiment.id) for r in results]  # type: ignore[union-attr]
    while not all(columns.load(store.conn, i, keys=[]) for i in ids):  # type: ignore[attr-defined]
        assert time.monotonic() < deadline, "the writer process did not build the columns"
        time.sleep(0.02)
    built = columns.load(store.conn, ids[0])  # type: ignore[attr-defined]
    assert built is not None and built.runs == ROWS and built.metrics["exact"].results == ROWS
    comparison = assay.compare("a", "b", client=client)
    assert comparison is not None
    client.close()


def _row(position: int, repetition: int) -> Any:
    from assay.schemas import Example, Run
    from assay.store.records import ExperimentRow

    example = Example(inputs={"p": position}, outputs={"r": repetition})
    run = Run(inputs=example.inputs, outputs={"o": (position, repetition)})
    return ExperimentRow(run=run, example=example, repetition=repetition, position=position, results=[])


def test_kept_values_come_back_in_data_order_whatever_order_rows_came_in() -> None:
    keys = [(p, r) for p in range(40) for r in range(2)]
    shuffled = keys[1::2] + keys[0::2]
    kept = KeptRows()
    for position, repetition in shuffled:
        kept.add(_row(position, repetition))
    lists = kept.lists(len(keys), ["outputs", "inputs"])
    assert lists["outputs"] == [{"o": key} for key in keys]
    assert lists["inputs"] == [{"p": p} for p, _ in keys]
    assert set(lists) == {"inputs", "outputs"}
    rows = kept.rows(len(keys))
    assert rows is not None and [(row.position, row.repetition) for row in rows] == keys


def test_kept_rows_in_order_are_handed_over_without_a_copy() -> None:
    kept = KeptRows()
    added = [_row(position, 0) for position in range(50)]
    for row in added:
        kept.add(row)
    assert kept.rows(50) == added and kept.rows(50) is kept.rows(50)
    first = kept.lists(50, ["reference_outputs"])["reference_outputs"]
    assert first == [{"r": 0}] * 50
    assert kept.lists(50, ["reference_outputs"])["reference_outputs"] is first
    assert kept.lists(49) == {} and kept.rows(49) is None  # not every stored row was kept


def _shape(row: dict[str, Any]) -> tuple[Any, ...]:
    """What a user reads of a row, as text (NaN and sets compared as written)."""
    run, example = row["run"], row["example"]
    results = [(r.key, r.score, r.value, r.comment) for r in row["evaluation_results"]["results"]]
    return tuple(
        map(repr, (run.id, run.outputs, run.error, example.id, example.inputs, example.outputs, results))
    )


def test_a_fresh_run_hands_its_rows_over_without_reading_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = assay.Client(str(tmp_path / "k.db"))
    _data(client)

    def exact(outputs: Any, reference_outputs: Any) -> dict[str, Any]:
        return {"key": "exact", "score": outputs["y"] == reference_outputs["y"], "comment": "c"}

    results = assay.evaluate(
        _target, data="kept", evaluators=[exact], client=client, progress=False, max_concurrency=8
    )

    def no_reads(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the rows were read back from the store")

    with monkeypatch.context() as patch:
        patch.setattr(type(client.store), "load_rows", no_reads)
        handed = [_shape(row) for row in results]
        indexed = _shape(results[ROWS - 1])
    stored = [_shape(row) for row in client.read_experiment(results.experiment_name)]
    assert handed == stored  # in data order, though rows finished out of order
    assert indexed == stored[-1] and len(results) == ROWS
    client.close()


def test_over_budget_the_rows_are_read_back_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    client = assay.Client(str(tmp_path / "k.db"))
    _data(client, 100)
    kept = [_shape(row) for row in assay.evaluate(_target, data="kept", client=client, progress=False)]
    monkeypatch.setattr(_kept, "MAX_ROWS", 10)
    read = [_shape(row) for row in assay.evaluate(_target, data="kept", client=client, progress=False)]
    assert [row[1:] for row in kept] == [row[1:] for row in read]  # all but the run ids
    client.close()
