"""The writer process started ahead of a run of inline data (``Store.warm_writer``): it
starts before the data is stored, the run's batches all go to it, and one that no run
takes is stopped with the store, never left behind or multiplied."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from assay import Client, evaluate
from assay.errors import DataError
from assay.store.sqlite import SQLiteStore
from assay.store.sqlite._writer import SPAWN_AFTER_ROWS
from assay.store.sqlite._writer_process import _wait_for_builders


def _target(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"y": inputs["x"] * 2}


def _right(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> bool:
    return bool(outputs["y"] == reference_outputs["y"])


def _data(n: int) -> list[dict[str, Any]]:
    return [{"inputs": {"x": i}, "outputs": {"y": 2 * i}} for i in range(n)]


def _warm_pid(store: SQLiteStore) -> int | None:
    process = store._warm._process if store._warm is not None else None
    return None if process is None else process.pid


def _exited(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def _wait_until_ready(store: SQLiteStore) -> None:
    """The rows begin once the waiting process (if any) has opened the database: whether
    it is ready before a fast run's rows are all written depends on the machine's load,
    and the claim tested is where batches go once it is (120 s: a ceiling for a broken
    machine; there is no event to wait on but its answer)."""
    process = store._warm._process if store._warm is not None else None
    deadline = time.monotonic() + 120
    while process is not None and process.state() == "starting" and time.monotonic() < deadline:
        time.sleep(0.005)


def _spy(store: SQLiteStore) -> dict[str, Any]:
    """What the run did, seen through the store's own methods: the writer process waiting
    while the data was stored, and the process each batch went to."""
    seen: dict[str, Any] = {"while_importing": [], "batches_by": [], "writers": []}
    add_values, batch_writer = store.add_example_values, store.batch_writer

    def adding(*args: Any, **kwargs: Any) -> Any:
        seen["while_importing"].append(_warm_pid(store))
        added = add_values(*args, **kwargs)
        _wait_until_ready(store)
        return added

    def writer(*args: Any, **kwargs: Any) -> Any:
        batches = batch_writer(*args, **kwargs)
        write = batches.write

        def writing(prepared: Any, stats: Any) -> None:
            seen["batches_by"].append(batches.process_pid)  # type: ignore[attr-defined]
            write(prepared, stats)

        batches.write = writing  # type: ignore[method-assign]
        seen["writers"].append(batches)
        return batches

    store.add_example_values = adding  # type: ignore[method-assign]
    store.batch_writer = writer  # type: ignore[method-assign]
    return seen


def test_inline_data_has_its_writer_process_started_before_it_is_stored(tmp_path: Path) -> None:
    client = Client(str(tmp_path / "w.db"))
    seen = _spy(client.store)  # type: ignore[arg-type]
    n = 3 * SPAWN_AFTER_ROWS
    results = evaluate(_target, data=_data(n), evaluators=[_right], client=client, progress=False)
    assert [row["evaluation_results"]["results"][0].score for row in results] == [True] * n
    (warm,) = seen["while_importing"]
    assert warm is not None, "no writer process was running while the data was stored"
    # the run took that process: whichever batches went to a process went to it
    assert {pid for pid in seen["batches_by"] if pid is not None} <= {warm}
    (batches,) = seen["writers"]
    assert batches.rows_by_process + batches.rows_here == n
    assert batches.rows_by_process > 0, "no batch went through the writer process"
    assert _warm_pid(client.store) is None  # type: ignore[arg-type]
    assert client.store.count_rows(results.experiment_id) == n
    client.close()


def test_small_or_resumed_runs_start_none_ahead(tmp_path: Path) -> None:
    client = Client(str(tmp_path / "s.db"))
    store: SQLiteStore = client.store  # type: ignore[assignment]
    seen = _spy(store)
    evaluate(_target, data=_data(SPAWN_AFTER_ROWS - 1), client=client, progress=False)
    assert seen["while_importing"] == [None]
    data = _data(SPAWN_AFTER_ROWS)
    evaluate(_target, data=data, client=client, progress=False, experiment="e")
    assert seen["while_importing"][-1] is not None and _warm_pid(store) is None  # started, then taken
    resumed = evaluate(_target, data=data, client=client, progress=False, experiment="e", resume=True)
    assert len(list(resumed)) == SPAWN_AFTER_ROWS
    assert _warm_pid(store) is None, "a resumed run started a process ahead"
    client.close()


def test_a_writer_process_no_run_takes_is_stopped_with_the_store(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "u.db")
    store.warm_writer(SPAWN_AFTER_ROWS)
    pid = _warm_pid(store)
    assert pid is not None
    store.warm_writer(SPAWN_AFTER_ROWS)  # one waits already: no second one
    assert _warm_pid(store) == pid and not _exited(pid)
    store.close()
    deadline = time.monotonic() + 30
    while not _exited(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _exited(pid)


def test_runs_refused_after_it_started_leave_one_waiting_process_not_many(tmp_path: Path) -> None:
    """Bad data is found while it is stored, after the process started: the next run
    finds it waiting (one, however many runs were refused), and takes it."""
    client = Client(str(tmp_path / "b.db"))
    store: SQLiteStore = client.store  # type: ignore[assignment]
    bad = [*_data(SPAWN_AFTER_ROWS), {"inputs": "not an object"}]
    waiting_after = []
    for _ in range(3):
        with pytest.raises(DataError, match="inputs"):
            evaluate(_target, data=bad, client=client, progress=False)
        waiting_after.append(_warm_pid(store))
    waiting = waiting_after[0]
    assert waiting is not None and waiting_after == [waiting] * 3, "a refused run started another process"
    assert not _exited(waiting)
    seen = _spy(store)
    evaluate(_target, data=_data(SPAWN_AFTER_ROWS), client=client, progress=False)
    assert {pid for pid in seen["batches_by"] if pid is not None} <= {waiting}
    assert _warm_pid(store) is None
    client.close()
    _wait_for_builders(None)  # the run's own process, building the metric columns
    assert _exited(waiting)


def test_a_waiting_process_that_died_is_not_taken_and_the_run_stores_every_row(tmp_path: Path) -> None:
    client = Client(str(tmp_path / "k.db"))
    store: SQLiteStore = client.store  # type: ignore[assignment]
    store.warm_writer(SPAWN_AFTER_ROWS)
    dead = _warm_pid(store)
    assert dead is not None
    os.kill(dead, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while not _exited(dead) and time.monotonic() < deadline:
        time.sleep(0.01)
    seen = _spy(store)
    n = 2 * SPAWN_AFTER_ROWS
    results = evaluate(_target, data=_data(n), client=client, progress=False)
    assert dead not in seen["batches_by"], "a batch was handed to the killed process"
    (batches,) = seen["writers"]
    assert batches.rows_by_process + batches.rows_here == n
    assert client.store.count_rows(results.experiment_id) == n
    client.close()


def _taken_in_fork(store: SQLiteStore, answer: Any) -> None:
    taken = store._warm is not None and store._warm.take() is not None
    store.close()  # a forked worker closing its copy of the store
    answer.put("took it" if taken else "none")


def test_a_process_forked_from_the_run_neither_takes_nor_stops_its_waiting_process(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "f.db")
    store.warm_writer(SPAWN_AFTER_ROWS)
    waiting = _warm_pid(store)
    assert waiting is not None
    context = multiprocessing.get_context("fork")
    answer = context.SimpleQueue()
    child = context.Process(target=_taken_in_fork, args=(store, answer))
    child.start()  # while the process may still be starting: the case a kill would hit
    child.join(60)
    assert answer.get() == "none", "the forked process took the run's writer process"
    assert _warm_pid(store) == waiting
    taken = store._warm.take() if store._warm is not None else None
    assert taken is not None and taken.pid == waiting, "the run lost its waiting process"
    deadline = time.monotonic() + 30
    while taken.state() == "starting" and time.monotonic() < deadline:
        time.sleep(0.005)
    assert taken.state() == "ready"
    taken.close()
    assert taken.returncode == 0
    store.close()


def test_a_stored_datasets_run_has_its_writer_process_started_before_its_experiment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As soon as the run knows its size (not as its first row starts): a process that is
    not ready by the first batch leaves that batch to the run's own process."""
    client = Client(str(tmp_path / "stored.db"))
    store: SQLiteStore = client.store  # type: ignore[assignment]
    client.create_dataset("d")
    client.create_examples(inputs=[{"x": i} for i in range(SPAWN_AFTER_ROWS)], dataset_name="d")
    waiting_at_creation: list[int | None] = []
    create_experiment = SQLiteStore.create_experiment

    def creating(self: SQLiteStore, *args: Any, **kwargs: Any) -> Any:
        waiting_at_creation.append(_warm_pid(self))
        return create_experiment(self, *args, **kwargs)

    monkeypatch.setattr(SQLiteStore, "create_experiment", creating)
    results = evaluate(_target, data="d", client=client, progress=False, experiment="e")
    assert waiting_at_creation[0] is not None  # None on the old code
    assert _warm_pid(store) is None  # the run took it
    assert [row["run"].outputs for row in results] == [{"y": 2 * i} for i in range(SPAWN_AFTER_ROWS)]
    evaluate(_target, data="d", client=client, progress=False, experiment="e", resume=True)
    assert _warm_pid(store) is None, "a resumed run started a process ahead"
    client.close()
