"""The crash promise with pipelined batches: the run hands the SQLite writer process its
next batch while the previous one commits, so two batches are in flight. Killed at
every point of that (the writer process, the run, or both; real SIGKILLs at points the
processes reach themselves, not timers), the store holds every row whole or not at
all, exactly the batches confirmed or handed over whole, in order (the figures stored
with the last one count them), and a resume runs only the rows that are missing.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from assay import Client
from assay.evaluation._tally import Tally, tally_row
from assay.store.fence import LeaseFencedError
from assay.store.records import ExperimentRecord, ExperimentRow
from assay.store.sqlite import _FILE_PRAGMAS, SQLiteStore, _writer_process
from assay.store.sqlite._writer import PIPELINE_DEPTH, ProcessBatchWriter
from assay.store.sqlite._writer_process import settle_writers_of

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import _faulty_writer_child as faulty  # noqa: E402
import _pipelined_run as job  # noqa: E402
from test_writer_process import _experiment, _write_on  # noqa: E402

REAL_CHILD = Path(_writer_process.__file__).with_name("_writer_child.py")
BATCH = 100


@pytest.fixture
def faulty_writer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Writer processes started from now on die where ``arm(point, batch)`` says."""
    marker = tmp_path / "writer-killed"
    monkeypatch.setattr(_writer_process, "_CHILD", HERE / "_faulty_writer_child.py")
    monkeypatch.setenv("ASSAY_TEST_REAL_CHILD", str(REAL_CHILD))

    def arm(point: str, batch: int) -> Path:
        monkeypatch.setenv("ASSAY_TEST_WRITER_FAULT", f"{point}:{batch}:{marker}")
        return marker

    return arm


def killed_at(marker: Path) -> tuple[str, int, str, int]:
    point, batch, waiting, committed = marker.read_text().split()
    return point, int(batch), waiting, int(committed)


def check_whole(db: Path, expected_rows: int) -> set[int]:
    """Every stored run has its results, the figures count the stored rows; returns the
    stored positions."""
    with sqlite3.connect(db) as conn:
        positions = [row[0] for row in conn.execute("SELECT position FROM runs")]
        orphans = conn.execute(
            "SELECT COUNT(*) FROM runs u WHERE NOT EXISTS (SELECT 1 FROM results r WHERE r.run_id = u.id)"
        ).fetchone()[0]
        results = conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]
        counted = conn.execute("SELECT max(row_count) FROM experiment_stats").fetchone()[0]
    assert len(positions) == len(set(positions)) == expected_rows
    assert orphans == 0 and results == RESULTS_PER_ROW[db.name] * expected_rows
    assert counted == expected_rows or (expected_rows == 0 and counted is None)
    return set(positions)


RESULTS_PER_ROW = {"w.db": 2, "r.db": 1}


def _ready(batches: ProcessBatchWriter) -> None:
    batches.expect(10**6)
    process = batches.process
    assert process is not None
    deadline = time.monotonic() + 60
    while process.state() == "starting" and time.monotonic() < deadline:
        time.sleep(0.005)
    assert process.state() == "ready"


@pytest.mark.parametrize("batch", [0, 3])
@pytest.mark.parametrize("point", faulty.POINTS)
def test_a_writer_killed_with_two_batches_in_flight_loses_none_and_stores_none_twice(
    tmp_path: Path, faulty_writer: Any, point: str, batch: int
) -> None:
    """The run goes on: each batch the dead process had is checked, in order, and written
    here unless it was committed (written twice, it would fail its unique key)."""
    db = tmp_path / "w.db"
    record, rows = _experiment(db, 10 * BATCH)
    marker = faulty_writer(point, batch)
    store = SQLiteStore(db)
    batches = ProcessBatchWriter(store, record.id, _write_on, _FILE_PRAGMAS, spawn_after=0)
    _ready(batches)
    tally = Tally()
    for start in range(0, len(rows), BATCH):
        chunk = rows[start : start + BATCH]
        for row in chunk:
            tally.add(tally_row(row))
        batches.write([store.prepare_row(record.id, row) for row in chunk], tally.counts())
        assert batches.rows_in_flight <= PIPELINE_DEPTH * BATCH
    batches.close()
    store.close()
    assert killed_at(marker) == (
        point,
        batch,
        "waiting",
        BATCH * (batch + (point in ("committed", "answered"))),
    )
    assert batches.rows_by_process == BATCH * (batch + (point in ("committed", "answered")))
    assert batches.rows_by_process + batches.rows_here == len(rows)
    assert check_whole(db, len(rows)) == set(range(len(rows)))


def _dataset(db: Path, rows: int) -> None:
    client = Client(str(db))
    client.create_dataset("piped")
    client.create_examples(
        inputs=[{"x": i} for i in range(rows)],
        outputs=[{"y": 2 * i} for i in range(rows)],
        dataset_name="piped",
    )
    client.close()


def _killed_run(db: Path, point: str, nth: int) -> int:
    """Runs ``_pipelined_run`` to its kill; returns the rows it said must be stored."""
    marker = db.with_name("run-killed")
    command = [
        sys.executable,
        str(HERE / "_pipelined_run.py"),
        str(db),
        point,
        str(nth),
        str(marker),
    ]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as run:
        _, err = run.communicate(timeout=300)
    assert run.returncode == -signal.SIGKILL, err[-2000:]
    # as a resume does (its lease waits the same way): what the writer process was
    # handed is committed, or rolled back, before the store is read
    settle_writers_of(str(db), run.pid)
    return int(marker.read_text())


def _resume(db: Path, rows: int, stored: set[int]) -> None:
    """A resume runs exactly the missing rows; then every row is there once."""
    calls: list[int] = []

    def counting(inputs: dict[str, Any]) -> dict[str, Any]:
        calls.append(inputs["x"])
        return job.target(inputs)

    client = Client(str(db))
    client.evaluate(
        counting, data="piped", evaluators=[job.correct], experiment="piped", resume=True, progress=False
    )
    assert sorted(calls) == sorted(set(range(rows)) - stored)
    assert check_whole(db, rows) == set(range(rows))
    record = client.store.get_experiment(name="piped")
    assert record is not None and record.status == "completed"
    client.close()


ROWS = 4000  # 500-row batches: enough for two in flight, twice


@pytest.mark.slow
@pytest.mark.parametrize("point", ["sent", "half-sent", "collected"])
def test_a_run_killed_with_two_batches_in_flight_resumes_only_what_is_missing(
    tmp_path: Path, point: str
) -> None:
    """What was handed over whole is committed by the writer process after the run's
    death; a frame cut short is not (nothing of its batch); the rest is run again."""
    db = tmp_path / "r.db"
    _dataset(db, ROWS)
    expected = _killed_run(db, point, 1)
    assert 0 < expected < ROWS
    stored = check_whole(db, expected)
    _resume(db, ROWS, stored)


@pytest.mark.slow
@pytest.mark.parametrize("point", faulty.POINTS)
def test_a_writer_and_its_run_killed_with_two_batches_in_flight_resume_only_what_is_missing(
    tmp_path: Path, faulty_writer: Any, point: str
) -> None:
    """The writer process dies; its run dies too, as it finds that out (before it checks
    or writes anything): the store holds what the process committed, nothing in doubt."""
    db = tmp_path / "r.db"
    _dataset(db, ROWS)
    marker = faulty_writer(point, 2)
    written_here = _killed_run(db, "taking-over", 0)
    _, batch, waiting, committed = killed_at(marker)
    assert (batch, waiting) == (2, "waiting")
    stored = check_whole(db, written_here + committed)
    _resume(db, ROWS, stored)


def _prepared_batches(store: SQLiteStore, record: ExperimentRecord, rows: list[ExperimentRow]) -> list[Any]:
    return [
        [store.prepare_row(record.id, row) for row in rows[start : start + BATCH]]
        for start in range(0, len(rows), BATCH)
    ]


def test_a_batch_that_fails_with_the_next_in_flight_leaves_only_the_batches_before_it(tmp_path: Path) -> None:
    """The next batch was handed over before the failure was known: the writer process
    skips it rather than commit rows after a gap. The failure is raised; what is stored
    is the batches before the failed one; the process goes on for batches sent after."""
    db = tmp_path / "f.db"
    record, rows = _experiment(db, 4 * BATCH)
    store = SQLiteStore(db)
    batches = ProcessBatchWriter(store, record.id, _write_on, _FILE_PRAGMAS, spawn_after=0)
    _ready(batches)
    first, second, third, fourth = _prepared_batches(store, record, rows)
    batches.write(first, None)
    batches.write(second + first[:1], None)  # a row stored already: the batch fails whole
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
        batches.write(third, None)  # handed over before the failure is collected
        batches.flush()
    assert batches.rows_in_flight == 0
    assert store.count_rows(record.id) == BATCH  # neither the failed batch nor the one after
    batches.write(fourth, None)  # sent once the failure is known: committed
    batches.close()
    assert batches.rows_by_process == 2 * BATCH and batches.rows_here == 0
    positions = [row[0] for row in store.conn.execute("SELECT position FROM runs ORDER BY position")]
    assert positions == list(range(BATCH)) + list(range(3 * BATCH, 4 * BATCH))
    store.close()


def test_a_lease_taken_over_refuses_every_batch_in_flight(tmp_path: Path) -> None:
    from test_fence import take

    db = tmp_path / "l.db"
    record, rows = _experiment(db, 4 * BATCH)
    store = SQLiteStore(db)
    old = take(store, record, "old")
    batches = ProcessBatchWriter(store, record.id, _write_on, _FILE_PRAGMAS, fence=old, spawn_after=0)
    _ready(batches)
    first, second, third, fourth = _prepared_batches(store, record, rows)
    batches.write(first, None)
    batches.flush()
    take(store, record, "new", stale="old")
    with pytest.raises(LeaseFencedError):
        for batch in (second, third, fourth):
            batches.write(batch, None)
        batches.flush()
    batches.close()
    assert store.count_rows(record.id) == BATCH
    store.close()


def test_rows_the_writer_process_cannot_decode_fail_their_batch_whole(tmp_path: Path) -> None:
    """A batch's rows are decoded and encoded ahead of its commit (while the one before
    commits); one that cannot be fails its own batch, when its turn comes, whole, and
    the batch after it is skipped, as any failed batch's."""
    db = tmp_path / "d.db"
    record, rows = _experiment(db, 3 * BATCH)
    store = SQLiteStore(db)
    batches = ProcessBatchWriter(store, record.id, _write_on, _FILE_PRAGMAS, spawn_after=0)
    _ready(batches)
    first, second, third = _prepared_batches(store, record, rows)
    batches.write(first, None)
    batches.write([*second[:-1], b"\x80\x05not a pickle"], None)
    with pytest.raises(sqlite3.DatabaseError, match="UnpicklingError: invalid load key"):
        batches.write(third, None)
        batches.flush()
    batches.close()
    assert store.count_rows(record.id) == BATCH
    store.close()
