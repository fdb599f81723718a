"""The SQLite writer process: batches it commits are the batches this process would have
committed, byte for byte; it failing or being killed loses no row and stores none twice;
a run killed while it writes leaves its last batch committed and no process behind."""

from __future__ import annotations

import math
import multiprocessing
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from assay import Client
from assay.evaluation._tally import Tally, tally_row
from assay.schemas import EvaluationResult, Example, Run
from assay.store.records import ExperimentRecord, ExperimentRow
from assay.store.sqlite import _FILE_PRAGMAS, SQLiteStore
from assay.store.sqlite._writer import SPAWN_AFTER_ROWS, ProcessBatchWriter
from assay.store.sqlite._writer_process import WriterProcess, settle_writers_of

ODD_VALUES: list[Any] = [
    "\ud800 lone surrogate",
    "nul \x00 inside",
    10**400,
    -(2**63) - 1,
    math.nan,
    -0.0,
    math.inf,
    {"1": [1, 2, {"deep": [[[]]]}]},
    "é∑😀",
    "",
    # not plain data: such rows are encoded in the run's process, in the same batches
    np.float64(0.5),
    OrderedDict(b=1, a=2),
    datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=-5))),
    {1: {frozenset({2}), (3, 4)}},
]


def _experiment(path: Path, count: int) -> tuple[ExperimentRecord, list[ExperimentRow]]:
    client = Client(str(path))
    dataset = client.create_dataset("writer")
    client.create_examples(inputs=[{"i": i} for i in range(count)], dataset_name="writer")
    record = ExperimentRecord(name="writer", dataset_id=dataset.id, dataset_version=dataset.version)
    client.store.create_experiment(record)
    rows = _rows_of(client.store, record)
    client.close()
    return record, rows


def _rows_of(store: Any, record: ExperimentRecord) -> list[ExperimentRow]:
    """A row for each example of the experiment's dataset, odd values in every field."""
    examples: list[Example] = list(store.iter_examples(record.dataset_id))
    now = datetime.now(timezone.utc)
    elsewhere = now.astimezone(timezone(timedelta(hours=5, minutes=30)))
    return [
        ExperimentRow(
            run=Run(
                inputs=example.inputs,
                outputs={"o": ODD_VALUES[i % len(ODD_VALUES)], "i": i},
                start_time=elsewhere if i % 7 == 0 else now,
                end_time=now,
                error="boom \ud83d" if i % 13 == 0 else None,
            ),
            example=example,
            repetition=0,
            position=i,
            results=[
                EvaluationResult(key="s", score=(i % 3) / 2, comment=str(ODD_VALUES[i % len(ODD_VALUES)])),
                EvaluationResult(key="t", value=ODD_VALUES[(i + 3) % len(ODD_VALUES)]),
            ],
        )
        for i, example in enumerate(examples)
    ]


def _dump(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = sqlite3.connect(path)
    try:
        return {
            table: conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3").fetchall()
            for table in ("runs", "results", "experiment_stats", "metric_stats")
        }
    finally:
        conn.close()


def _write_all(store: SQLiteStore, batches: Any, record: ExperimentRecord, rows: list[ExperimentRow]) -> None:
    tally = Tally()
    for start in range(0, len(rows), 100):
        chunk = rows[start : start + 100]
        for row in chunk:
            tally.add(tally_row(row))
        prepared = [store.prepare_row(record.id, row) for row in chunk]
        batches.write(prepared, tally.stats())


def _wait_until_started(batches: ProcessBatchWriter, rows: int) -> None:
    """Start the writer process and wait for its ready answer (an event, however loaded the
    machine), so that every batch goes through it."""
    batches.expect(rows)
    assert batches.process is not None
    while batches.process.state() == "starting":
        time.sleep(0.005)
    assert batches.process.state() == "ready"


def test_what_the_writer_process_commits_is_what_this_process_commits(tmp_path: Path) -> None:
    record, rows = _experiment(tmp_path / "a.db", 1200)
    shutil.copy(tmp_path / "a.db", tmp_path / "b.db")  # the same dataset and experiment ids
    for name, spawn_after in (("a.db", 10**9), ("b.db", 0)):
        store = SQLiteStore(tmp_path / name)
        batches = ProcessBatchWriter(store, record.id, _write_on, _FILE_PRAGMAS, spawn_after=spawn_after)
        if name == "b.db":
            _wait_until_started(batches, len(rows))
        _write_all(store, batches, record, rows)
        batches.close()
        if name == "a.db":
            assert batches.rows_by_process == 0
        else:
            assert batches.rows_by_process == 1200, "the writer process wrote every batch"
        store.close()
    inline, by_process = _dump(tmp_path / "a.db"), _dump(tmp_path / "b.db")
    assert len(inline["runs"]) == 1200 and len(inline["results"]) == 2400
    assert by_process == inline
    read_back = Client(str(tmp_path / "b.db")).read_experiment("writer")
    assert [row["run"].outputs["i"] for row in read_back] == list(range(1200))


def _write_on(conn: Any, experiment_id: Any, prepared: Any, stats: Any, fence: Any = None) -> None:
    from assay.store.sqlite import _write_batch_on

    _write_batch_on(conn, experiment_id, prepared, stats, fence)


@pytest.mark.parametrize("delay", [0.0, 0.002, 0.01, 0.03])
def test_a_writer_process_killed_at_any_moment_loses_no_row_and_stores_none_twice(
    tmp_path: Path, delay: float
) -> None:
    record, rows = _experiment(tmp_path / "k.db", 3000)
    store = SQLiteStore(tmp_path / "k.db")
    batches = ProcessBatchWriter(store, record.id, _write_on, _FILE_PRAGMAS, spawn_after=0)
    prepared = [store.prepare_row(record.id, row) for row in rows]
    batches.write(prepared[:100], None)
    while batches.rows_by_process == 0:  # until a batch has gone through the process
        time.sleep(0.01)
        batches.write(prepared[batches.rows_here + batches.rows_by_process :][:100], None)
    pid = batches.process_pid
    assert pid is not None
    sent = batches.rows_here + batches.rows_by_process
    killer = threading.Timer(delay, os.kill, (pid, signal.SIGKILL))
    killer.start()
    batches.write(prepared[sent : sent + 2000], None)  # a big batch: killed while it commits, or before
    killer.join()
    batches.write(prepared[sent + 2000 :], None)
    batches.close()
    stored = [row[0] for row in store.conn.execute("SELECT position FROM runs ORDER BY position")]
    assert stored == list(range(3000))
    store.close()


KILLED_RUN = """
import multiprocessing, os, signal, sys, time
sys.path.insert(0, sys.argv[2])
from test_writer_process import _rows_of, _write_on, statements_of
from assay.store.sqlite._writer import ProcessBatchWriter
from assay.store.sqlite import _FILE_PRAGMAS, SQLiteStore

store = SQLiteStore(sys.argv[1])
record = store.get_experiment(name="writer")
rows = _rows_of(store, record)
prepared = [store.prepare_row(record.id, row) for row in rows]
batches = ProcessBatchWriter(store, record.id, _write_on, _FILE_PRAGMAS, spawn_after=0)
done = 0
while batches.rows_by_process == 0:
    batches.write(prepared[done : done + 100], None)
    done += 100
    time.sleep(0.005)

def hold():
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1), os.dup2(null, 2)  # the test reads this run's output to its end
    time.sleep(60)

holder = None
if sys.argv[3] == "forked":  # a pool's worker, say: forked while the writer process runs
    holder = multiprocessing.get_context("fork").Process(target=hold)
    holder.start()
print(batches.process_pid, holder.pid if holder else 0, done, flush=True)
if sys.argv[3] == "on cue":
    sys.stdin.readline()
# the last batch is handed over whole; this process dies before the answer comes
batches.process.send(statements_of(store, record, prepared[done:]), time.monotonic() + 60)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _killed_run(db: Path, mode: str) -> subprocess.Popen[str]:
    script = db.with_name("killed_run.py")
    script.write_text(KILLED_RUN, encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, str(script), str(db), str(Path(__file__).parent), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # never read: a pipe left full would stall the run
        text=True,
    )


def _stored(db: Path) -> int:
    conn = sqlite3.connect(db, timeout=30)
    try:
        return int(conn.execute("SELECT count(*) FROM runs").fetchone()[0])
    finally:
        conn.close()


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not _alive(pid)


@pytest.mark.parametrize("mode", ["plain", "forked"])
def test_a_run_killed_while_its_process_writes_leaves_the_last_batch_committed_and_no_process(
    tmp_path: Path, mode: str
) -> None:
    """``forked``: a process forked from the run still lives (a pool's worker); its copy
    of the pipe must not keep the writer process waiting for more."""
    _, rows = _experiment(tmp_path / "r.db", 4000)
    run = _killed_run(tmp_path / "r.db", mode)
    out, err = run.communicate(timeout=120)
    assert run.returncode == -signal.SIGKILL, err
    writer_pid, holder_pid, _ = (int(field) for field in out.split())
    try:
        assert _gone_within(writer_pid, 30), "the writer process outlived its run"
        if holder_pid:
            assert _alive(holder_pid), "the forked process ended first: nothing was tested"
    finally:
        if holder_pid:
            os.kill(holder_pid, signal.SIGKILL)
    assert _stored(tmp_path / "r.db") == len(rows)


@pytest.mark.parametrize("waits", ["for its commit", "until the timeout"])
def test_a_run_taking_a_dead_runs_place_waits_for_its_writer_process(tmp_path: Path, waits: str) -> None:
    """The dead run's writer process waits for a lock with its last batch. What takes
    the run's place (``settle_writers_of``, called by the lease) waits until it has
    committed and gone, or kills it at the timeout (its batch then rolled back whole), so
    no late commit lands under the new run."""
    db = tmp_path / "d.db"
    _, rows = _experiment(db, 3000)
    lock = sqlite3.connect(db, isolation_level=None)
    with _killed_run(db, "on cue") as run:
        assert run.stdout is not None and run.stdin is not None
        writer_pid, _, handed_before = (int(field) for field in run.stdout.readline().split())
        lock.execute("BEGIN IMMEDIATE")  # the writer process will wait on this
        run.stdin.write("go\n")
        run.stdin.flush()
        assert run.wait(timeout=60) == -signal.SIGKILL
    timeout = 30.0 if waits == "for its commit" else 0.5
    settling = threading.Thread(target=settle_writers_of, args=(str(db), run.pid, timeout))
    settling.start()
    settling.join(1.0)
    if waits == "for its commit":
        assert settling.is_alive(), "it did not wait for the writer process"
        lock.execute("COMMIT")
        settling.join(30)
        assert not settling.is_alive() and not _alive(writer_pid)
        assert _stored(db) == len(rows)
    else:
        settling.join(10)
        assert not settling.is_alive() and _gone_within(writer_pid, 5)
        lock.execute("COMMIT")
        assert _stored(db) == handed_before
    lock.close()


def statements_of(store: SQLiteStore, record: ExperimentRecord, prepared: list[Any]) -> list[Any]:
    from assay.store.sqlite._writer import StatementLog

    log = StatementLog()
    _write_on(log, record.id, prepared, None)
    return log.statements


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_failed_statement_is_the_same_error_from_the_process_and_nothing_of_it_stays(
    tmp_path: Path,
) -> None:
    record, rows = _experiment(tmp_path / "e.db", 20)
    store = SQLiteStore(tmp_path / "e.db")
    prepared = [store.prepare_row(record.id, row) for row in rows]
    store.write_batch(record.id, prepared[:10], None)
    process = WriterProcess(store.path, _FILE_PRAGMAS)
    try:
        while process.state() == "starting":
            time.sleep(0.005)
        assert process.state() == "ready"
        duplicate = statements_of(store, record, prepared[10:] + prepared[:1])
        with pytest.raises(sqlite3.IntegrityError) as by_process:
            process.commit(duplicate)
        with pytest.raises(sqlite3.IntegrityError) as here:
            store.write_batch(record.id, prepared[10:] + prepared[:1], None)
        assert str(by_process.value) == str(here.value)
        assert store.count_rows(record.id) == 10  # the failed batch rolled back whole
        process.commit(statements_of(store, record, prepared[10:]))  # it goes on after an error
        assert store.count_rows(record.id) == 20
    finally:
        process.close()
    store.close()


def test_a_run_smaller_than_the_threshold_starts_no_process(tmp_path: Path) -> None:
    record, rows = _experiment(tmp_path / "s.db", SPAWN_AFTER_ROWS - 1)
    store = SQLiteStore(tmp_path / "s.db")
    batches = store.batch_writer(record.id)
    _write_all(store, batches, record, rows)
    assert batches.process_pid is None  # type: ignore[attr-defined]
    batches.close()
    assert store.count_rows(record.id) == len(rows)
    store.close()


@pytest.mark.parametrize("expected", [SPAWN_AFTER_ROWS, SPAWN_AFTER_ROWS - 1])
def test_a_run_that_expects_enough_rows_starts_its_process_before_the_first_batch(
    tmp_path: Path, expected: int
) -> None:
    record, rows = _experiment(tmp_path / "e.db", 200)
    store = SQLiteStore(tmp_path / "e.db")
    batches = store.batch_writer(record.id)
    batches.expect(expected)
    started = batches.process_pid is not None  # type: ignore[attr-defined]
    assert started == (expected >= SPAWN_AFTER_ROWS)
    if started:  # ready by the time the first batch comes: every batch goes through it
        process = batches.process  # type: ignore[attr-defined]
        deadline = time.monotonic() + 30
        while process.state() == "starting" and time.monotonic() < deadline:
            time.sleep(0.01)
    _write_all(store, batches, record, rows)
    batches.close()
    assert batches.rows_by_process == (200 if started else 0)  # type: ignore[attr-defined]
    assert store.count_rows(record.id) == 200
    store.close()


def test_a_database_the_process_cannot_open_leaves_the_writing_here(tmp_path: Path) -> None:
    record, rows = _experiment(tmp_path / "p.db", 1000)
    store = SQLiteStore(tmp_path / "p.db")
    batches = ProcessBatchWriter(store, record.id, _write_on, ("PRAGMA no_such_thing = (",), spawn_after=0)
    _write_all(store, batches, record, rows)
    batches.close()
    assert batches.rows_by_process == 0 and batches.rows_here == 1000
    assert store.count_rows(record.id) == 1000
    store.close()


def test_closing_does_not_wait_for_a_process_forked_while_it_wrote(tmp_path: Path) -> None:
    """A multiprocessing pool forked from the run holds the pipe open: the process still
    stops when the run closes it, by itself (not killed at the timeout)."""
    store = SQLiteStore(tmp_path / "f.db")
    process = WriterProcess(store.path, _FILE_PRAGMAS)
    holder = multiprocessing.get_context("fork").Process(target=time.sleep, args=(60,))
    try:
        while process.state() == "starting":
            time.sleep(0.005)
        holder.start()
        process.close(timeout=20)
        assert holder.is_alive(), "the forked copy ended first: nothing was tested"
        assert process.returncode == 0
    finally:
        holder.kill()
        holder.join()
        store.close()


@pytest.mark.parametrize("stop_at", ["between batches", "in a commit"])
def test_a_stopped_writer_process_is_killed_and_the_run_goes_on_here(tmp_path: Path, stop_at: str) -> None:
    """SIGSTOP: the process neither dies nor answers. The commit that waits on it is cut
    at the answer timeout, the process killed, and every row stored once."""
    record, rows = _experiment(tmp_path / "t.db", 3000)
    store = SQLiteStore(tmp_path / "t.db")
    batches = ProcessBatchWriter(
        store, record.id, _write_on, _FILE_PRAGMAS, spawn_after=0, answer_timeout=1.0
    )
    prepared = [store.prepare_row(record.id, row) for row in rows]
    while batches.rows_by_process == 0:
        done = batches.rows_here + batches.rows_by_process
        batches.write(prepared[done : done + 100], None)
        time.sleep(0.01)
    pid = batches.process_pid
    assert pid is not None
    done = batches.rows_here + batches.rows_by_process
    if stop_at == "between batches":
        os.kill(pid, signal.SIGSTOP)
    else:
        threading.Timer(0.005, os.kill, (pid, signal.SIGSTOP)).start()
    batches.write(prepared[done : done + 2000], None)  # 2,000 rows: the stop comes while they commit
    batches.write(prepared[done + 2000 :], None)
    batches.close()
    assert batches.process_pid is None and not _alive(pid)
    stored = [row[0] for row in store.conn.execute("SELECT position FROM runs ORDER BY position")]
    assert stored == list(range(3000))
    store.close()


NOT_A_WRITER = {
    "exits at once": "exit 0",
    "prints a banner and stays": "echo 'Welcome to an embedding application!'; sleep 30",
    "prints part of a frame and stays": "printf abc; sleep 30",
    "answers with a pickle that runs code": (
        'python3 -c "import os, pickle, sys, time\n'
        "class Run:\n"
        "    def __reduce__(self):\n"
        "        return (os.system, ('touch ' + os.environ['MARKER'],))\n"
        "body = pickle.dumps(Run())\n"
        "sys.stdout.buffer.write(len(body).to_bytes(8, 'little') + body)\n"
        "sys.stdout.flush()\n"
        'time.sleep(30)"'
    ),
}


@pytest.mark.parametrize("behaviour", list(NOT_A_WRITER))
def test_an_interpreter_that_is_not_a_writer_leaves_the_writing_here_and_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, behaviour: str
) -> None:
    """``sys.executable`` may be an embedding program (uWSGI, a frozen app) rather than
    a Python: whatever it does, the rows are written here, and each attempt leaves no
    process, descriptor or thread behind."""
    from assay.store.sqlite import _writer_process

    fake = tmp_path / "not-python"
    fake.write_text(f"#!/bin/sh\n{NOT_A_WRITER[behaviour]}\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setattr(_writer_process, "interpreter", lambda: str(fake))
    monkeypatch.setenv("MARKER", str(tmp_path / "it-ran"))
    record, rows = _experiment(tmp_path / "n.db", 300)
    store = SQLiteStore(tmp_path / "n.db")
    prepared = [store.prepare_row(record.id, row) for row in rows]
    descriptors = threads = 0
    for attempt in range(3):
        if attempt == 1:  # after the first: the store's own connection is open by now
            descriptors, threads = len(os.listdir("/proc/self/fd")), threading.active_count()
        batches = ProcessBatchWriter(store, record.id, _write_on, _FILE_PRAGMAS, spawn_after=0)
        for start in range(attempt * 100, attempt * 100 + 100, 10):
            batches.write(prepared[start : start + 10], None)
            time.sleep(0.02)
        pid = batches.process_pid
        batches.close()
        assert batches.rows_by_process == 0 and batches.rows_here == 100
        assert pid is None or not _alive(pid)
    assert store.count_rows(record.id) == 300
    assert len(os.listdir("/proc/self/fd")) == descriptors and threading.active_count() == threads
    assert not (tmp_path / "it-ran").exists(), "an answer ran code in the run's process"
    store.close()
