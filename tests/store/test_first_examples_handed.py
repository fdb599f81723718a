"""Inline data's first examples committed by the run's writer process, off the run's
critical path (``SQLiteStore._add_first_examples``): the run hands them over and starts
its rows; they commit before any row of the run, wherever the rows are written; a
process that does not confirm them leaves them to the run; a crash keeps them or leaves
an empty dataset, never a run row naming an example that is not stored."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from assay import Client, evaluate
from assay._ids import content_id_texts
from assay.errors import DataError
from assay.store import sqlite as sqlite_store
from assay.store.sqlite import SQLiteStore
from assay.store.sqlite import _examples as example_rows
from assay.store.sqlite._writer import SPAWN_AFTER_ROWS
from assay.store.sqlite._writer_process import WriterProcess, settle_writers_of

N = 2 * SPAWN_AFTER_ROWS


def _target(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"y": inputs["x"] * 2}


def _right(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> bool:
    return bool(outputs["y"] == reference_outputs["y"])


def _data(n: int) -> list[dict[str, Any]]:
    return [{"inputs": {"x": i, "s": "é" * (i % 3)}, "outputs": {"y": 2 * i}} for i in range(n)]


def _examples_inserted_by_this_process(store: SQLiteStore) -> list[str]:
    """Every ``INSERT INTO examples`` this process's connections run from now on."""
    seen: list[str] = []
    connect = store._connect

    def traced() -> sqlite3.Connection:
        conn = connect()
        conn.set_trace_callback(lambda sql: seen.append(sql) if "INSERT INTO examples" in sql else None)
        return conn

    store._connect = traced  # type: ignore[method-assign]
    store.drop_connection()  # the next use on each thread connects again, traced
    return seen


def _stored(path: Path) -> tuple[int, list[tuple[str, int, str]], int]:
    """From a connection of its own: the datasets, the examples (id, version, created)
    and the runs stored."""
    with sqlite3.connect(path) as conn:
        datasets = conn.execute("SELECT COUNT(*) FROM datasets").fetchone()[0]
        examples = conn.execute(
            "SELECT id, added_version, created_at FROM examples ORDER BY position"
        ).fetchall()
        runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    return datasets, examples, runs


def test_the_run_hands_its_inline_examples_to_the_writer_process(tmp_path: Path) -> None:
    client = Client(str(tmp_path / "h.db"))
    store: SQLiteStore = client.store  # type: ignore[assignment]
    inserted_here = _examples_inserted_by_this_process(store)
    data = _data(N)
    results = evaluate(_target, data=data, evaluators=[_right], client=client, progress=False)
    rows = list(results)
    assert inserted_here == [], "the run's process inserted its inline examples itself"
    assert [row["evaluation_results"]["results"][0].score for row in rows] == [True] * N
    datasets, examples, runs = _stored(tmp_path / "h.db")
    assert (datasets, len(examples), runs) == (1, N, N)
    dataset = store.list_datasets()[0]
    named = content_id_texts(dataset.metadata["content_sha256"])
    assert [example[0] for example in examples] == [named(i) for i in range(N)]
    assert {example[1] for example in examples} == {1} and dataset.version == 1
    # what the rows saw is what is stored, field by field (the stored text's instant too)
    stored = {str(example.id): example for example in store.iter_examples(dataset.id, version=1)}
    for row in rows:
        assert row["example"].model_dump() == stored[str(row["example"].id)].model_dump()
    client.close()


def test_the_examples_commit_after_the_experiment_and_its_lease_are_stored(tmp_path: Path) -> None:
    """The writer process's transaction of the examples would hold the write lock the
    run's experiment and lease wait for: they are held back until those are stored."""
    path = tmp_path / "o.db"
    client = Client(str(path))
    store: SQLiteStore = client.store  # type: ignore[assignment]
    release, seen = store.release_held_examples, []

    def releasing() -> None:
        held = bool(store._held)
        with sqlite3.connect(path) as conn:
            experiments = conn.execute("SELECT COUNT(*) FROM experiments").fetchone()[0]
            leases = conn.execute("SELECT COUNT(*) FROM leases").fetchone()[0]
            examples = conn.execute("SELECT COUNT(*) FROM examples").fetchone()[0]
        seen.append((held, experiments, leases, examples))
        release()

    store.release_held_examples = releasing  # type: ignore[method-assign]
    evaluate(_target, data=_data(N), client=client, progress=False)
    released = [state for state in seen if state[0]]  # (held, experiments, leases, examples)
    assert released == [(True, 1, 1, 0)], seen
    assert len(_stored(path)[1]) == N
    client.close()


def test_rows_written_in_the_run_wait_for_the_examples_handed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shard of fewer rows than a writer process is started for writes its rows in the
    run's process; the examples went to the process started for the whole data: the rows'
    transaction begins only once they are committed (the process is held stopped until
    a moment after the run's first batch is ready)."""
    path = tmp_path / "s.db"
    client = Client(str(path))
    store: SQLiteStore = client.store  # type: ignore[assignment]
    stopped = _stop_the_warm_process(store)
    examples_when_rows_began: list[int] = []
    write_batch_on = sqlite_store._write_batch_on

    def writing(conn: Any, *args: Any, **kwargs: Any) -> Any:
        examples_when_rows_began.append(len(_stored(path)[1]))
        return write_batch_on(conn, *args, **kwargs)

    monkeypatch.setattr(sqlite_store, "_write_batch_on", writing)
    first_row = threading.Event()

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        first_row.set()
        return _target(inputs)

    resume = threading.Thread(target=_resume_after, args=(stopped, first_row))
    resume.start()
    evaluate(target, data=_data(N), client=client, progress=False, experiment="e", shard=(0, 4))
    resume.join()
    assert examples_when_rows_began and set(examples_when_rows_began) == {N}
    client.close()


def _stop_the_warm_process(store: SQLiteStore) -> list[int]:
    """Hold the writer process started ahead of the run stopped; its pid is appended to
    the list returned."""
    warm, pids = store.warm_writer, []

    def stopped(rows: int) -> None:
        warm(rows)
        process = store._warm._process if store._warm is not None else None
        assert process is not None
        os.kill(process.pid, signal.SIGSTOP)
        pids.append(process.pid)

    store.warm_writer = stopped  # type: ignore[method-assign]
    return pids


def _resume_after(pids: list[int], event: threading.Event) -> None:
    """Let the stopped process go on once the rows run (and a little more: the first
    batch is then ready to be written)."""
    event.wait(60)
    threading.Event().wait(0.3)  # not a bound on anything: the order is what is asserted
    os.kill(pids[0], signal.SIGCONT)


def test_examples_the_process_did_not_commit_are_committed_by_the_run_first(tmp_path: Path) -> None:
    """The process dies (held stopped, then killed) with the examples handed to it: the
    run commits them itself, before its rows, and the run is whole."""
    path = tmp_path / "k.db"
    client = Client(str(path))
    store: SQLiteStore = client.store  # type: ignore[assignment]
    _stop_the_warm_process(store)
    release = store.release_held_examples

    def releasing() -> None:
        process = store._warm._process if store._warm is not None else None
        release()
        if process is not None and process._owed:
            os.kill(process.pid, signal.SIGKILL)
            killed.append(process.pid)

    killed: list[int] = []
    store.release_held_examples = releasing  # type: ignore[method-assign]
    results = evaluate(_target, data=_data(N), evaluators=[_right], client=client, progress=False)
    assert killed, "the examples were not handed to the process"
    assert [row["evaluation_results"]["results"][0].score for row in results] == [True] * N
    datasets, examples, runs = _stored(path)
    assert (datasets, len(examples), runs) == (1, N, N)
    assert store.list_datasets()[0].version == 1
    client.close()


def test_examples_committed_again_are_not_added_twice(tmp_path: Path) -> None:
    """The process committed them but its answer was lost: the run's replay finds them
    there (the transaction's guard) and adds nothing; into a dataset that was changed in
    between, it refuses, naming the dataset."""
    store = SQLiteStore(tmp_path / "r.db")
    dataset = store.create_dataset("d")
    replays: list[Any] = []
    process = WriterProcess(str(tmp_path / "r.db"), store._pragmas)
    store._warm._process, store._warm._owner = process, os.getpid()  # type: ignore[union-attr]
    values = [(content_id_texts("ab" * 32)(i), {"x": i}, None, None) for i in range(10)]
    original_hand = process.hand

    def hand(statements: Any, replay: Any) -> None:
        replays.append((statements, replay))
        original_hand(statements, replay)

    process.hand = hand  # type: ignore[method-assign]
    version, kept = store.add_example_values(dataset.id, values, keep=True, new=True)
    assert version == 1 and kept is not None and len(list(kept())) == 10
    store.close()  # the process commits, answers, and stops
    store = SQLiteStore(tmp_path / "r.db")
    ((statements, _),) = replays
    store._commit_first_examples(statements)  # again, as a replay would
    assert store.count_examples(dataset.id, version=1) == 10
    assert store.get_dataset(id=dataset.id).version == 1  # type: ignore[union-attr]
    other = store.create_dataset("other")
    store.add_example_values(other.id, [(content_id_texts("cd" * 32)(0), {"x": 0}, None, None)])
    moved = [
        (sql, [str(other.id)] if i == 0 else params, many) for i, (sql, params, many) in enumerate(statements)
    ]
    with pytest.raises(DataError, match=f"dataset {other.id} .* was changed while its first examples"):
        store._commit_first_examples(moved)
    assert store.count_examples(other.id, version=1) == 1
    store.close()


def test_more_examples_than_are_kept_are_stored_by_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past what the run keeps to feed its rows, the rows read the examples from the
    store: they are stored before the run goes on, by the run."""
    monkeypatch.setattr(example_rows, "KEEP_LIMIT", SPAWN_AFTER_ROWS)
    client = Client(str(tmp_path / "l.db"))
    inserted_here = _examples_inserted_by_this_process(client.store)  # type: ignore[arg-type]
    results = evaluate(_target, data=_data(N), evaluators=[_right], client=client, progress=False)
    assert [row["evaluation_results"]["results"][0].score for row in results] == [True] * N
    assert inserted_here, "the examples the run reads back were not stored before it read them"
    assert len(_stored(tmp_path / "l.db")[1]) == N
    client.close()


_KILLED_AT_FIRST_ROW = textwrap.dedent(
    """
    import os, signal, sys
    from assay import Client, evaluate

    def target(inputs):
        os.kill(os.getpid(), signal.SIGKILL)

    data = [{"inputs": {"x": i, "s": "é" * (i % 3)}, "outputs": {"y": 2 * i}} for i in range(int(sys.argv[2]))]
    evaluate(target, data=data, client=Client(sys.argv[1]), progress=False, experiment="e")
    """
)


def test_a_run_killed_once_its_examples_are_handed_over_leaves_them_stored(tmp_path: Path) -> None:
    """SIGKILL at the first row: the writer process commits the examples it was handed
    and exits; no run row is stored; the run resumed finds the same dataset and ids."""
    path = tmp_path / "c.db"
    killed = subprocess.Popen([sys.executable, "-c", _KILLED_AT_FIRST_ROW, str(path), str(N)])
    assert killed.wait() == -signal.SIGKILL
    settle_writers_of(str(path), killed.pid)  # its writer process commits what it was handed, and exits
    datasets, examples, runs = _stored(path)
    assert (datasets, len(examples), runs) == (1, N, 0)
    client = Client(str(path))
    dataset = client.store.list_datasets()[0]
    resumed = evaluate(_target, data=_data(N), client=client, progress=False, experiment="e", resume=True)
    rows = list(resumed)
    assert [row["run"].outputs for row in rows] == [{"y": 2 * i} for i in range(N)]
    assert {row["example"].dataset_id for row in rows} == {dataset.id}
    assert [row[0] for row in _stored(path)[1]] == [row[0] for row in examples]  # the same ids, once
    client.close()


_SHARD = textwrap.dedent(
    """
    import sys
    from assay import Client, evaluate

    data = [{"inputs": {"x": i, "s": "é" * (i % 3)}, "outputs": {"y": 2 * i}} for i in range(int(sys.argv[2]))]
    client = Client(sys.argv[1])
    evaluate(lambda inputs: {"y": inputs["x"] * 2}, data=data, client=client, progress=False,
             experiment="e", shard=(int(sys.argv[3]), 2), wait_for_lease=True)
    client.close()
    """
)


def test_two_processes_storing_the_same_data_at_once_share_one_dataset(tmp_path: Path) -> None:
    """The shards of one run, started together on the same inline data: one creates the
    dataset and hands its examples to its writer process, the other waits for them; both
    run on the one dataset, and every row is stored once."""
    path = tmp_path / "p.db"
    Client(str(path)).close()  # the store exists before the two processes open it
    shards = [
        subprocess.Popen([sys.executable, "-c", _SHARD, str(path), str(N), str(index)]) for index in (0, 1)
    ]
    assert [shard.wait() for shard in shards] == [0, 0]
    datasets, examples, runs = _stored(path)
    assert (datasets, len(examples), runs) == (1, N, N)
    with sqlite3.connect(path) as conn:
        ran_on = conn.execute("SELECT COUNT(DISTINCT example_id) FROM runs").fetchone()[0]
        missing = conn.execute("SELECT COUNT(*) FROM runs WHERE example_id NOT IN (SELECT id FROM examples)")
        assert (ran_on, missing.fetchone()[0]) == (N, 0)


def _held_store(tmp_path: Path) -> SQLiteStore:
    """A store whose writer process waits for a run: new inline examples are held."""
    store = SQLiteStore(tmp_path / "held.db")
    process = WriterProcess(str(tmp_path / "held.db"), store._pragmas)
    store._warm._process, store._warm._owner = process, os.getpid()  # type: ignore[union-attr]
    return store


def test_two_runs_of_one_store_holding_examples_at_once_both_commit(tmp_path: Path) -> None:
    """Two runs (threads) of one store each hold their new dataset's examples before either
    releases: both are committed, neither replaces the other."""
    store = _held_store(tmp_path)
    first, second = store.create_dataset("first"), store.create_dataset("second")
    for dataset, digest in ((first, "ab"), (second, "cd")):
        values = [(content_id_texts(digest * 32)(i), {"x": i}, None, None) for i in range(5)]
        version, _ = store.add_example_values(dataset.id, values, keep=True, new=True)
        assert version == 1
    store.release_held_examples()
    store.close()
    reopened = SQLiteStore(tmp_path / "held.db")
    assert [reopened.count_examples(d.id, version=1) for d in (first, second)] == [5, 5]
    reopened.close()


def test_examples_whose_hand_over_is_interrupted_stay_held_and_are_committed_later(
    tmp_path: Path,
) -> None:
    store = _held_store(tmp_path)
    dataset = store.create_dataset("d")
    values = [(content_id_texts("ef" * 32)(i), {"x": i}, None, None) for i in range(5)]
    store.add_example_values(dataset.id, values, keep=True, new=True)
    warm = store._warm
    assert warm is not None
    hand = warm.hand

    def interrupted(*_: Any) -> bool:
        raise KeyboardInterrupt

    warm.hand = interrupted  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        store.release_held_examples()
    warm.hand = hand  # type: ignore[method-assign]
    store.close()  # releases what is still held
    reopened = SQLiteStore(tmp_path / "held.db")
    assert reopened.count_examples(dataset.id, version=1) == 5
    reopened.close()


def test_an_interrupt_while_awaiting_the_handed_answer_leaves_it_to_be_replayed(tmp_path: Path) -> None:
    """Interrupted while reading the answer to what it was handed, the process's answers
    are out of step: nothing more is written through it, and the transaction is replayed
    in the run's process (its guard adds nothing if it was committed)."""
    store = _held_store(tmp_path)
    dataset = store.create_dataset("d")
    values = [(content_id_texts("aa" * 32)(i), {"x": i}, None, None) for i in range(5)]
    store.add_example_values(dataset.id, values, keep=True, new=True)
    process = store._warm._process  # type: ignore[union-attr]
    replays: list[Any] = []
    original_hand = process.hand

    def hand(statements: Any, replay: Any) -> None:
        original_hand(statements, lambda s: (replays.append(s), replay(s)))

    process.hand = hand  # type: ignore[method-assign]
    store.release_held_examples()
    receive = process.receive

    def interrupted(*_: Any) -> Any:
        process.receive = receive  # type: ignore[method-assign]
        raise KeyboardInterrupt

    process.receive = interrupted  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        process.settle()
    assert process.state() == "failed" and replays == []
    process.settle()
    assert len(replays) == 1
    assert store.count_examples(dataset.id, version=1) == 5
    store.close()
