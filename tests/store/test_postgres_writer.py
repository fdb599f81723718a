"""PostgreSQL's writer process: a run's rows are pickled by its row threads and encoded,
formatted as COPY text and sent by a process of their own (``postgres._writer``), with
what the run's own writer guaranteed: one transaction a batch behind the run's lease, the
server's errors as they were, a killed run's last batch committed, a lost connection
ridden out; and the planner's statistics of the rows written refreshed before they are
read back (``postgres._statistics``)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from assay.errors import LeaseFencedError
from assay.schemas import EvaluationResult, Example, Run
from assay.store import open_store
from assay.store.fence import Fence
from assay.store.postgres import _writer, _writer_child
from assay.store.postgres._dialect import translate
from assay.store.postgres._statistics import WrittenRows
from assay.store.postgres._writer import PostgresBatchWriter, settle_postgres_writers_of
from assay.store.records import ExperimentRecord, ExperimentRow, ExperimentStats
from assay.store.sqlite import _rows as rows_module

# what COPY's text format gives a meaning to, and text beyond ASCII
ODD = "a\tb\nc\rd\\e \\N \\. \n\\.\n é 中 \U0001f600 nul\x00"


def _experiment(store: Any, count: int) -> tuple[ExperimentRecord, list[ExperimentRow]]:
    dataset = store.create_dataset(f"d-{uuid.uuid4().hex[:6]}")
    examples = [Example(dataset_id=dataset.id, inputs={"q": i}, outputs={"a": i}) for i in range(count)]
    store.add_examples(dataset.id, examples)
    record = ExperimentRecord(
        name=f"e-{uuid.uuid4().hex[:6]}", dataset_id=dataset.id, dataset_version=1, num_examples=count
    )
    store.create_experiment(record)
    rows = [
        ExperimentRow(
            run=Run(inputs=example.inputs, outputs={"o": ODD, "i": i}, error=ODD if i % 5 == 0 else None),
            example=example,
            repetition=0,
            position=i,
            results=[
                EvaluationResult(key=ODD, score=i % 2 == 0, comment=ODD),
                EvaluationResult(key="n", score=i, value={"v": ODD}),
            ],
        )
        for i, example in enumerate(examples)
    ]
    return record, rows


def _through_process(store: Any, record: ExperimentRecord, fence: Fence | None = None) -> PostgresBatchWriter:
    """The run's batch writer, its process started and ready."""
    writer = store.batch_writer(record.id, fence)
    assert isinstance(writer, PostgresBatchWriter)
    writer.expect(10_000)
    process = writer.process
    assert process is not None
    while process.state() == "starting":  # its first answer, READY, is on its way
        process._readable(1.0)
    assert process.state() == "ready"
    return writer


def _writing(url: str, count: int) -> tuple[Any, ExperimentRecord, PostgresBatchWriter, list[Any]]:
    """A store, an experiment of ``count`` rows, its batch writer through a ready process,
    and the rows as the row threads prepare them."""
    store = open_store(url)
    record, rows = _experiment(store, count)
    writer = _through_process(store, record)
    return store, record, writer, [store.prepare_row(record.id, row) for row in rows]


def _seen(store: Any, record: ExperimentRecord) -> list[tuple[Any, ...]]:
    return [
        (
            row.position,
            row.run.outputs,
            row.run.error,
            [(r.key, r.score, r.comment, r.value) for r in row.results],
        )
        for row in store.load_rows(record)
    ]


def test_a_row_thread_only_pickles_its_row(postgres_store_url: str) -> None:
    """Encoding and COPY text are the writer process's work, not the row threads'."""
    store = open_store(postgres_store_url)
    record, rows = _experiment(store, 2)
    assert type(store.prepare_row(record.id, rows[0])) is bytes
    store.close()


@pytest.mark.parametrize(
    "environment",
    [
        {},
        # libpq's settings from the environment: the process took them and the run's
        # connections did not (its statements and COPY text, UTF-8, read as Latin-1;
        # a search_path that sent its rows elsewhere)
        {"PGCLIENTENCODING": "LATIN1", "PGOPTIONS": "-c search_path=elsewhere"},
    ],
    ids=["plain", "libpq-environment"],
)
def test_the_process_stores_what_the_run_itself_stores(
    postgres_store_url: str, environment: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    store = open_store(postgres_store_url)
    here_record, here_rows = _experiment(store, 60)
    store.write_batch(here_record.id, [store.prepare_row(here_record.id, row) for row in here_rows], None)
    record, rows = _experiment(store, 60)
    writer = _through_process(store, record)
    writer.write([store.prepare_row(record.id, row) for row in rows], ExperimentStats(rows=60, run_errors=12))
    assert writer.unconfirmed_rows == 60  # sent, its answer read with the next batch or a flush
    writer.flush()
    assert writer.rows_by_process == 60 and writer.rows_here == 0 and writer.unconfirmed_rows == 0
    writer.close()
    assert _seen(store, record) == _seen(store, here_record)
    assert _seen(store, record)[0][2] == ODD.replace("\x00", "\\0")  # as PostgreSQL text holds a NUL
    assert store.load_stats(record.id).run_errors == 12  # type: ignore[union-attr]
    store.close()


def test_a_batch_whose_lease_was_taken_over_is_refused_and_nothing_sent_after_it_is_stored(
    postgres_store_url: str,
) -> None:
    store = open_store(postgres_store_url)
    record, rows = _experiment(store, 60)
    store.take_lease(record.id, 0, 1, host="here", pid=1, token="mine", ttl=600)
    writer = _through_process(store, record, Fence(record.id, 0, "mine"))
    prepared = [store.prepare_row(record.id, row) for row in rows]
    writer.write(prepared[:20], None)
    writer.flush()
    store.take_lease(record.id, 0, 1, host="there", pid=2, token="theirs", ttl=600, stale_token="mine")
    writer.write(prepared[20:40], None)  # sent; refused once its answer is read
    with pytest.raises(LeaseFencedError):
        writer.write(prepared[40:], None)  # sent before the answer to the one before
    assert store.count_rows(record.id) == 20
    assert writer.process is None and writer.unconfirmed_rows == 0  # given up
    with pytest.raises(LeaseFencedError):  # written here now: refused as well
        writer.write(prepared[40:], None)
    assert store.count_rows(record.id) == 20
    writer.close()
    store.close()


@pytest.mark.parametrize("taken_over", [False, True])
def test_a_run_end_with_no_rows_left_stores_its_figures_behind_the_fence(
    postgres_store_url: str, taken_over: bool
) -> None:
    """The final figures alone (nothing queued at the run's end): the fence's answer is
    awaited before the figures are written, as there is no row to refuse."""
    store = open_store(postgres_store_url)
    record, rows = _experiment(store, 10)
    store.take_lease(record.id, 0, 1, host="here", pid=1, token="mine", ttl=600)
    writer = _through_process(store, record, Fence(record.id, 0, "mine"))
    writer.write([store.prepare_row(record.id, row) for row in rows], ExperimentStats(rows=10))
    writer.flush()
    writer.ending(build_columns=False)  # the last batch's answer is read before it returns
    if taken_over:
        store.take_lease(record.id, 0, 1, host="there", pid=2, token="theirs", ttl=600, stale_token="mine")
        with pytest.raises(LeaseFencedError):
            writer.write([], ExperimentStats(rows=10, run_errors=3, final=True))
    else:
        writer.write([], ExperimentStats(rows=10, run_errors=3, final=True))
    assert writer.rows_by_process == 10 and writer.rows_here == 0
    assert store.load_stats(record.id).run_errors == (0 if taken_over else 3)  # type: ignore[union-attr]
    writer.close()
    store.close()


def test_a_failed_batch_is_the_servers_error_and_stores_none_of_its_rows(postgres_store_url: str) -> None:
    store, record, writer, prepared = _writing(postgres_store_url, 10)
    writer.write(prepared[:3], None)
    with pytest.raises(psycopg.errors.UniqueViolation):
        writer.write(prepared[3:] + prepared[:1], None)  # the first run again
        writer.flush()
    assert store.count_rows(record.id) == 3
    writer.write(prepared[3:], None)  # here: the process is given up after a failed batch
    assert (writer.rows_by_process, writer.rows_here) == (3, 7)
    writer.close()
    store.close()


def test_an_error_code_psycopg_does_not_know_is_still_the_servers_error(postgres_store_url: str) -> None:
    # a DBA's trigger with a code of its own: a KeyError from psycopg's lookup before
    store = open_store(postgres_store_url)
    record, rows = _experiment(store, 3)
    writer = _through_process(store, record)
    with psycopg.connect(postgres_store_url, autocommit=True) as admin:
        admin.execute(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
            "$$BEGIN RAISE EXCEPTION 'refused by policy' USING ERRCODE = 'ZZ999'; END$$"
        )
        admin.execute("CREATE TRIGGER refuse BEFORE INSERT ON runs FOR EACH ROW EXECUTE FUNCTION refuse()")
    with pytest.raises(psycopg.DatabaseError, match="refused by policy"):
        writer.write([store.prepare_row(record.id, row) for row in rows], None)
        writer.flush()
    assert store.count_rows(record.id) == 0
    writer.close()
    store.close()


def test_a_lost_connection_of_the_process_leaves_the_batch_to_the_run(postgres_store_url: str) -> None:
    store, record, writer, prepared = _writing(postgres_store_url, 30)
    writer.write(prepared[:10], None)
    writer.flush()
    with psycopg.connect(postgres_store_url, autocommit=True) as admin:
        ended = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'assay-writer' "
            "AND datname = current_database()"
        ).fetchall()
    assert ended == [(True,)]
    writer.write(prepared[10:20], None)
    writer.write(prepared[20:], None)
    assert (writer.rows_by_process, writer.rows_here) == (10, 20)
    writer.close()
    assert [row.position for row in store.load_rows(record)] == list(range(30))
    store.close()


def _lock_waiters(admin: Any) -> list[int]:
    rows = admin.execute(
        "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
    ).fetchall()
    return [pid for (pid,) in rows]


def _wait_for(condition: Any, what: str) -> None:
    """Polls the server's view until ``condition()`` holds (a generous bound: a hang
    fails the test instead of the suite)."""
    for _ in range(6000):
        if condition():
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"never saw {what}")


def test_a_killed_process_whose_batch_the_server_holds_leaves_it_to_the_run_alone(
    postgres_store_url: str,
) -> None:
    # the process sent its batch whole, COMMIT included; the server holds it behind a lock;
    # the process is killed: its session would commit the batch once unblocked, after the
    # run had found none of its rows and written them itself (UniqueViolation, run failed)
    store, record, writer, prepared = _writing(postgres_store_url, 20)
    writer.write(prepared[:10], None)
    writer.flush()
    failures: list[BaseException] = []

    def second_batch() -> None:
        try:
            writer.write(prepared[10:15], None)  # two in flight when the process is killed:
            writer.write(prepared[15:], None)  # both are the run's to write, in order
            writer.flush()
        except BaseException as exc:  # noqa: BLE001 - asserted below
            failures.append(exc)

    with (
        psycopg.connect(postgres_store_url) as blocker,
        psycopg.connect(postgres_store_url, autocommit=True) as admin,
    ):
        (session,) = admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'assay-writer' "
            "AND datname = current_database()"
        ).fetchone()  # type: ignore[misc]
        blocker.execute("LOCK TABLE row_orders IN EXCLUSIVE MODE")
        thread = threading.Thread(target=second_batch)
        thread.start()
        _wait_for(lambda: session in _lock_waiters(admin), "the process's batch waiting on the lock")
        os.kill(writer.process_pid, signal.SIGKILL)  # type: ignore[arg-type]
        # the run now writes the batch itself, and waits on the same lock: the killed
        # process's session must be gone by then (the old code left it queued first)
        _wait_for(
            lambda: len(_lock_waiters(admin)) == 1 and session not in _lock_waiters(admin),
            "the run alone waiting",
        )
        blocker.commit()
        thread.join(timeout=60)
    assert not failures, failures
    assert (writer.rows_by_process, writer.rows_here) == (10, 10)
    writer.close()
    assert [row.position for row in store.load_rows(record)] == list(range(20))
    store.close()


@contextlib.contextmanager
def _batches_held(url: str) -> Iterator[tuple[Any, Any, int]]:
    """A lock the writer process's batches wait on at the server (``blocker.commit()``
    lets them go), an admin connection, and the process's server session."""
    with psycopg.connect(url) as blocker, psycopg.connect(url, autocommit=True) as admin:
        session = _writer_session(admin)
        blocker.execute("LOCK TABLE row_orders IN EXCLUSIVE MODE")
        yield blocker, admin, session


def _in_call(thread: threading.Thread, function: str, module: str = "") -> bool:
    """Whether ``thread`` is inside a call of ``function`` (of a file whose path holds
    ``module``): blocked there, when that function waits."""
    frame = sys._current_frames().get(thread.ident or 0)
    while frame is not None:
        if frame.f_code.co_name == function and module in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def _in_wait(thread: threading.Thread) -> bool:
    """Whether ``thread`` is blocked in a ``threading.Condition.wait``."""
    return _in_call(thread, "wait", "threading")


def _writer_session(admin: Any) -> int:
    (session,) = admin.execute(
        "SELECT pid FROM pg_stat_activity WHERE application_name = 'assay-writer' "
        "AND datname = current_database()"
    ).fetchone()
    return int(session)


def test_a_batch_is_sent_before_the_answer_to_the_one_before_is_read(postgres_store_url: str) -> None:
    """Two batches in flight: the process encodes one while the server stores the other.
    A write returns once its batch is sent; the next waits for the answer to the one
    before it; both commit, in order, once the server can."""
    store, record, writer, prepared = _writing(postgres_store_url, 30)
    first_sent, second_sent = threading.Event(), threading.Event()

    def batches() -> None:
        writer.write(prepared[:10], None)
        first_sent.set()
        writer.write(prepared[10:], None)
        second_sent.set()

    with _batches_held(postgres_store_url) as (blocker, admin, session):
        thread = threading.Thread(target=batches)
        thread.start()
        assert first_sent.wait(60)  # the old writer waited here for the server
        _wait_for(
            lambda: session in _lock_waiters(admin) and _in_wait_for_answer(thread),
            "the second batch waiting",
        )
        assert not second_sent.is_set() and writer.unconfirmed_rows == 30
        assert store.count_rows(record.id) == 0
        blocker.commit()
        thread.join(timeout=60)
    assert second_sent.is_set()
    assert writer.unconfirmed_rows == 20  # the second's answer is read by the next write, or a flush
    writer.flush()
    assert (writer.rows_by_process, writer.rows_here, writer.unconfirmed_rows) == (30, 0, 0)
    writer.close()
    assert [row.position for row in store.load_rows(record)] == list(range(30))
    store.close()


def _in_wait_for_answer(thread: threading.Thread) -> bool:
    """Whether ``thread`` waits for a writer process's answer (polls its pipe)."""
    return _in_call(thread, "answer_to")


def test_nothing_sent_after_a_failed_batch_is_stored(postgres_store_url: str) -> None:
    """The process commits nothing after a batch that failed, though the run sent the
    next before reading the failure: its commits keep the order they were sent in."""
    store, record, writer, prepared = _writing(postgres_store_url, 10)
    writer.write(prepared[:3], None)
    writer.flush()
    writer.write(prepared[3:6] + prepared[:1], None)  # the first run again: refused by the server
    with pytest.raises(psycopg.errors.UniqueViolation):
        writer.write(prepared[6:], None)  # sent, then the answer to the one before read
    assert store.count_rows(record.id) == 3
    assert writer.process is None and writer.unconfirmed_rows == 0
    writer.write(prepared[3:], None)  # written here from now on
    assert (writer.rows_by_process, writer.rows_here) == (3, 7)
    writer.close()
    assert [row.position for row in store.load_rows(record)] == list(range(10))
    store.close()


@pytest.mark.parametrize("next_step", ["flush", "write"])
def test_a_batch_cancelled_on_the_server_is_the_runs_error_whenever_its_answer_is_read(
    postgres_store_url: str, next_step: str
) -> None:
    """The process answers a failure and stays to answer what was sent after it (skipped,
    not committed): a run that sends its next batch after the failure was answered still
    reads the failure (a process gone by then refused the send, and the run wrote the
    failed batch itself as if the process had died, the server's error never seen)."""
    store, record, writer, prepared = _writing(postgres_store_url, 20)
    with _batches_held(postgres_store_url) as (blocker, admin, session):
        writer.write(prepared[:10], None)  # in flight, held by the lock
        _wait_for(lambda: session in _lock_waiters(admin), "the batch on the lock")
        admin.execute("SELECT pg_cancel_backend(%s)", (session,))  # the batch fails: 57014
        process = writer.process
        assert process is not None
        _wait_for(lambda: process._readable(0), "the process's answer")
        blocker.commit()
    with pytest.raises(psycopg.errors.QueryCanceled):
        if next_step == "write":
            writer.write(prepared[10:], None)  # sent after the failure was answered
        writer.flush()
    assert store.count_rows(record.id) == 0 and writer.process is None
    writer.close()
    store.close()


def test_a_server_gone_while_a_batch_is_in_flight_fails_the_writer_leaving_none_in_flight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The writer process's batch held by the server (a lock), the server stopped: giving
    the process up can neither end its session nor look for the batch's rows, and raises
    (the run's error); no batch is left in flight for a later flush or close to trip on.
    A private server, stopped here."""
    pg: Any = sys.modules["assay_tests_postgres"]
    monkeypatch.setenv("ASSAY_PG_RECONNECT_S", "1")
    server = pg._start_private_server()
    try:
        url = str(pg.create_database(server.url))
        store = open_store(url)
        record, rows = _experiment(store, 20)
        writer = _through_process(store, record)
        prepared = [store.prepare_row(record.id, row) for row in rows]
        blocker, admin = psycopg.connect(url), psycopg.connect(url, autocommit=True)
        try:
            blocker.execute("LOCK TABLE row_orders IN EXCLUSIVE MODE")
            writer.write(prepared[:10], None)  # in flight, held by the lock
            _wait_for(lambda: len(_lock_waiters(admin)) > 0, "the batch on the lock")
            server._run("pg_ctl", "-D", str(server.data), "-m", "immediate", "-w", "stop")
            with pytest.raises(Exception, match="reconnect"):
                writer.flush()
            assert writer.process is None and writer.unconfirmed_rows == 0
            writer.flush()  # nothing left to answer
            writer.close()
        finally:
            blocker.close()
            admin.close()
            store.close()
    finally:
        server.stop()


def test_a_close_raises_the_error_of_a_batch_whose_answer_was_not_read(postgres_store_url: str) -> None:
    store, record, writer, prepared = _writing(postgres_store_url, 10)
    writer.write(prepared[:3], None)
    writer.flush()
    writer.write(prepared[3:] + prepared[:1], None)  # refused by the server (a run stored twice)
    with pytest.raises(psycopg.errors.UniqueViolation):
        writer.close()
    assert store.count_rows(record.id) == 3 and writer.process is None
    store.close()


def test_rows_sent_and_not_confirmed_count_in_the_runs_bound_on_what_a_crash_loses(
    postgres_store_url: str,
) -> None:
    """The row writer's bound (queued + being written <= max_pending + max_batch) counts
    the rows its batches sent and not confirmed: behind a held lock, two batches in
    flight, the row threads are held at the bound, not at the bound plus a batch."""
    from assay.evaluation._writer import RowWriter

    store = open_store(postgres_store_url)
    record, rows = _experiment(store, 60)
    writer = RowWriter(store, record.id, max_batch=10, max_pending=20, max_delay=60.0, expected_rows=10_000)
    batches = writer._batches
    assert isinstance(batches, PostgresBatchWriter)
    _wait_for(
        lambda: batches.process is not None and batches.process.state() == "ready", "the writer process"
    )
    put: list[int] = []

    def row_thread() -> None:
        for row in rows:
            writer.put(row)
            put.append(row.position)

    def held() -> bool:  # two batches sent, the writer waiting for the first's answer, the rows for room
        return len(batches._in_flight) == 2 and _in_wait_for_answer(writer._thread) and _in_wait(thread)

    with _batches_held(postgres_store_url) as (blocker, admin, session):
        thread = threading.Thread(target=row_thread)
        thread.start()
        _wait_for(lambda: session in _lock_waiters(admin) and held(), "the row thread held back")
        held_at = len(put)
        blocker.commit()
        thread.join(timeout=60)
    writer.close(finished=True)
    # max_pending + max_batch, the rows in flight among them: 40 or more if they were not counted
    assert held_at == 30
    assert store.count_rows(record.id) == 60
    store.close()


KILLED_RUN = textwrap.dedent(
    """
    import os, signal, sys, time
    sys.path.insert(0, sys.argv[3])
    from test_postgres_writer import _experiment, _through_process
    from assay.store import open_store

    store = open_store(sys.argv[1])
    record, rows = _experiment(store, int(sys.argv[2]))
    writer = _through_process(store, record)
    prepared = [store.prepare_row(record.id, row) for row in rows]
    writer.write(prepared[:100], None)
    print(os.getpid(), writer.process_pid, record.name, flush=True)
    log = writer._statement_log()
    writer._build(log, record.id, prepared[100:], None, None)
    # the last batch is handed over whole; this process dies before the answer comes
    writer.process.send(log.statements, time.monotonic() + 60)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def test_a_killed_runs_last_batch_is_committed_by_its_process_and_settled(
    postgres_store_url: str, tmp_path: Path
) -> None:
    script = tmp_path / "killed_run.py"
    script.write_text(KILLED_RUN, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, str(script), postgres_store_url, "600", str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == -signal.SIGKILL, run.stderr
    run_pid, writer_pid, name = run.stdout.split()
    store = open_store(postgres_store_url)
    settle_postgres_writers_of(store.url, int(run_pid))  # as a run taking the dead one's place does
    assert not _alive(int(writer_pid))
    record = store.get_experiment(name=name)
    assert record is not None and store.count_rows(record.id) == 600
    store.close()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def test_a_page_of_rows_written_is_read_by_walking_the_index_not_sorting_them_all(
    postgres_store_url: str,
) -> None:
    """Planned by statistics of an empty table, a page of a large experiment's rows was
    read by collecting every row after it and sorting them (each page dearer than the
    last); once the store that wrote them refreshes the statistics, the index is walked
    to the page's end."""
    store = open_store(postgres_store_url)
    record, rows = _experiment(store, 3_000)
    writer = store.batch_writer(record.id, None)
    for start in range(0, len(rows), 500):
        writer.write([store.prepare_row(record.id, row) for row in rows[start : start + 500]], None)
    writer.close()
    page = store.load_row_values(record, "reference_outputs", after=(99, 0), limit=100)
    assert [key for key, _ in page] == [(position, 0) for position in range(100, 200)]
    plan = _plan_of_page(postgres_store_url, record)
    assert "Sort" not in plan and "runs_by_position" in plan, plan
    store.close()


def test_a_table_another_session_holds_is_not_waited_for_before_a_read(postgres_store_url: str) -> None:
    # a VACUUM or another ANALYZE holds the lock ANALYZE needs: the refresh skips the
    # table, the read goes on (it waited for the holder before, and a lock_timeout made
    # the read itself fail)
    store = open_store(postgres_store_url)
    record, rows = _experiment(store, 2_500)
    writer = store.batch_writer(record.id, None)
    for start in range(0, len(rows), 500):
        writer.write([store.prepare_row(record.id, row) for row in rows[start : start + 500]], None)
    writer.close()
    read: list[int] = []
    with psycopg.connect(postgres_store_url) as holder:
        holder.execute("LOCK TABLE runs IN SHARE UPDATE EXCLUSIVE MODE")
        reader = threading.Thread(target=lambda: read.append(len(store.load_rows(record, limit=10))))
        reader.start()
        reader.join(timeout=60)
        assert read == [10]  # while the lock is still held
    store.close()


def test_a_refresh_that_fails_leaves_the_read_to_go_on_and_is_tried_again() -> None:
    written = WrittenRows(threshold=10)
    written.add("e", 10)
    attempts: list[str] = []

    def failing() -> None:
        attempts.append("failed")
        raise psycopg.errors.LockNotAvailable("canceling statement due to lock timeout")

    written.before_reading("e", failing)  # no error: the read goes on
    written.before_reading("e", lambda: attempts.append("refreshed"))
    written.before_reading("e", lambda: attempts.append("again"))  # counts started again
    assert attempts == ["failed", "refreshed"]


def test_the_writers_counting_their_batches_do_not_wait_for_a_refresh() -> None:
    written = WrittenRows(threshold=10)
    written.add("e", 10)
    analyzing, release = threading.Event(), threading.Event()

    def slow_analyze() -> None:
        analyzing.set()
        release.wait(60)

    reader = threading.Thread(target=written.before_reading, args=("e", slow_analyze))
    reader.start()
    assert analyzing.wait(60)
    counter = threading.Thread(target=written.add, args=("f", 500))
    counter.start()
    counter.join(timeout=60)
    counted = not counter.is_alive()
    release.set()
    reader.join(timeout=60)
    assert counted  # it held the lock through the whole refresh before


class _Recorder:
    def execute(self, sql: str, params: Any = ()) -> list[Any]:
        self.statement = (sql, params)
        return []


def _plan_of_page(url: str, record: ExperimentRecord) -> str:
    recorder = _Recorder()
    rows_module.load_row_values(recorder, record, "reference_outputs", (99, 0), 0, 100)  # type: ignore[arg-type]
    sql, params = recorder.statement
    with psycopg.connect(url, autocommit=True) as admin:
        return "\n".join(row[0] for row in admin.execute("EXPLAIN " + translate(sql), params).fetchall())


def _builders() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "assay-columns"]


def _columns_built(store: Any, record: ExperimentRecord) -> list[tuple[Any, ...]]:
    rows = store.conn.execute(
        "SELECT built_at IS NOT NULL FROM metric_column_sets WHERE experiment_id = ?", (str(record.id),)
    ).fetchall()
    return [tuple(row) for row in rows]


def test_the_columns_are_built_once_the_run_has_finished_the_experiment(postgres_store_url: str) -> None:
    """Not while the run's summary evaluators read its rows back (in the run's process
    and on the server); marked pending with the last batch meanwhile."""
    for thread in _builders():
        thread.join()
    store = open_store(postgres_store_url)
    record, rows = _experiment(store, 50)
    writer = store.batch_writer(record.id, None)
    writer.ending(build_columns=True)
    writer.write([store.prepare_row(record.id, row) for row in rows], ExperimentStats(rows=50, final=True))
    with psycopg.connect(postgres_store_url) as other:  # a build started now would wait for it
        other.execute(
            "SELECT 1 FROM metric_column_sets WHERE experiment_id = %s FOR UPDATE", (str(record.id),)
        )
        writer.close(build_columns=True)
        assert _builders() == [] and _columns_built(store, record) == [(False,)]  # pending
    store.finish_experiment(record.id, "completed")
    for thread in _builders():
        thread.join()
    assert _columns_built(store, record) == [(True,)]
    store.close()


class _CopyRecorder:
    """libpq's ``PQputCopyData`` as the writer process calls it (a C int length)."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def PQputCopyData(self, conn: Any, data: bytes, length: int) -> int:  # noqa: N802 - libpq's name
        assert 0 < length < 2**31 and length == len(data)
        self.sent.append(data)
        return 1


def test_a_tables_copy_text_goes_in_slices_a_c_int_can_measure() -> None:
    # 2 GiB or more passed whole wrapped to a negative length: libpq sent nothing, the
    # COPY stored no row, and the batch was answered committed
    assert _writer_child.COPY_SLICE < 2**31
    lib = _CopyRecorder()
    text = b"".join(b"%d\tx\\ty\n" % i for i in range(1_000))
    assert _writer_child.put_copy_data(lib, None, text, slice_bytes=1_000)
    assert b"".join(lib.sent) == text and max(len(piece) for piece in lib.sent) == 1_000


def test_the_libpq_of_a_virtual_environment_in_a_folder_with_a_space_is_found() -> None:
    # the path was cut at its last space: the process could not load libpq, so every
    # run from a checkout in such a folder wrote in the run's process (seen in CI)
    maps = [
        "7f00a0000000-7f00a0001000 r-xp 00000000 08:01 1234 /usr/lib/libc.so.6\n",
        "7f00b0000000-7f00b0100000 r-xp 00000000 08:01 5678 "
        "/tmp/x/fresh clone/.venv/lib/python3.11/site-packages/psycopg_binary.libs/libpq-9b38f5e3.so.5.16\n",
    ]
    assert _writer.libpq_in_maps(maps) == (
        "/tmp/x/fresh clone/.venv/lib/python3.11/site-packages/psycopg_binary.libs/libpq-9b38f5e3.so.5.16"
    )
    assert _writer.libpq_in_maps(maps[:1]) is None
