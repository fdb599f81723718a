"""A run's batches on PostgreSQL, committed by a writer process, off the run's interpreter.

As SQLite's (``sqlite._writer``): the row threads only pickle their rows' fields
(``Store.prepare_row``), and a second process encodes them, formats their ``COPY`` text
and sends the batch, on the other core and its own connection, in the run's writer
thread's stead (``_writer_child``). Before, the row threads made the ``COPY`` text
themselves, under the GIL they need for the rows: ~40% of their time. The batch is the
same transaction, the same round trips (``_batch``), behind the same lease fence; the
statements around the rows are built by the same code as SQLite's, in SQLite's dialect,
and translated here (``_dialect``), so the process only runs them.

What differs from SQLite's: the run sends a batch before it reads the answer to the one
before (two in flight, ``PostgresBatchWriter.IN_FLIGHT``), so the process encodes one
while the server stores the other: the chain behind the run's writer thread (the
process's encoding, then the server's inserts, ~23 and ~32 us a row) took both one
after the other, and the run waited on it for most of its time. A batch's error (its
lease refused, the server's) is raised when its answer is read (by the next ``write``,
the run's last, or ``flush``), and the batches sent after it are not stored: the
process commits nothing after a failed batch. The rows sent and not yet confirmed count
as being written in the run's bound on what a crash may lose (``unconfirmed_rows``).
A lost connection is the process's end (it answers ``lost``), and the run then looks
for each batch it had sent, in order, by its first row, and writes those not there
itself, reconnecting (``_reconnect``); a row whose text cannot be ``COPY`` text is
written by the run too. The metric columns are built by a thread of the run once it has
finished the experiment (``PostgresStore.build_columns_when_finished``).
"""

from __future__ import annotations

import ctypes.util
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from assay.errors import StoreWriteError
from assay.store import _codec as codec
from assay.store import _columns as columns
from assay.store._row_text import RESULT_COLUMNS, RUN_COLUMNS
from assay.store.fence import Fence
from assay.store.postgres._conn import _adapt, _quoted
from assay.store.postgres._dialect import translate
from assay.store.records import ExperimentStats
from assay.store.sqlite._writer import BatchStatements, ProcessBatchWriter, StatementLog
from assay.store.sqlite._writer_process import (
    ANSWER_TIMEOUT_S,
    Statements,
    WriterProcess,
    WriterProcessError,
    settle_writers_of,
)

if TYPE_CHECKING:
    from assay.store.postgres import PostgresStore

__all__ = ["PostgresBatchWriter", "PostgresWriterProcess", "settle_postgres_writers_of"]

CHILD = Path(__file__).with_name("_writer_child.py")


class PostgresWriterProcess(WriterProcess):
    """A child running ``_writer_child.py`` on the store at ``url``, connected to ``dsn``
    (sent through its pipe, never on its command line: it may hold a password), through
    the libpq this process's psycopg loaded."""

    CHILD = CHILD
    KIND = "PostgreSQL"
    READY = ("ready", "assay-postgres-writer", 2)

    def __init__(self, url: str, dsn: str, answer_timeout: float = ANSWER_TIMEOUT_S) -> None:
        self._libpq = libpq_path()
        if self._libpq is None:
            raise WriterProcessError("no libpq found for the PostgreSQL writer process")
        setup = (writer_conninfo(dsn), _quoted(RUN_COLUMNS + ", failed"), _quoted(RESULT_COLUMNS))
        super().__init__(url, setup, answer_timeout)

    backend_pid: int | None = None  # its server session, once ready

    def _is_ready(self, answer: object) -> bool:
        if not (isinstance(answer, tuple) and len(answer) == 4 and answer[:3] == self.READY):
            return False
        self.backend_pid = answer[3] if isinstance(answer[3], int) else None
        return True

    def _arguments(self) -> list[str]:
        return [str(self._libpq), *super()._arguments()]

    def _error(self, answer: tuple[Any, ...]) -> Exception:
        """psycopg's exception for the SQLSTATE the server gave (a duplicate run is a
        ``UniqueViolation`` here as in the run's process)."""
        import psycopg

        if answer[1] == "_NotCopyable":  # the run writes this batch itself
            return self._failed(f"could not send a batch as COPY text ({answer[2]})")
        sqlstate = str(answer[3]) if len(answer) > 3 else ""
        try:
            error_class = psycopg.errors.lookup(sqlstate) if sqlstate else psycopg.DatabaseError
        except KeyError:  # a code psycopg does not know (a trigger's own, an extension's)
            error_class = psycopg.errors.get_base_exception(sqlstate)
        return error_class(str(answer[2]))


class WholeStatements(StatementLog):
    """A batch's statements as SQLite's writer records them, each made whole for the
    writer process: in PostgreSQL's dialect, its parameters adapted as the run's own
    connection adapts them (``_conn``) and written in as literals by psycopg (which
    quotes them for ``conn``'s server), so the process sends them as they are."""

    def __init__(self, conn: Any) -> None:
        super().__init__()
        import psycopg

        self._cursor = psycopg.ClientCursor(conn)
        self._whole("SELECT ?", ("",))  # a connection lost shows now, not halfway through

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.statements.append((self._whole(sql, params), None, False))

    def executemany(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
        for row in params:
            self.execute(sql, row)

    def guard(self, sql: str, params: Sequence[Any]) -> None:
        self.statements.append((self._whole(sql, params), params, "guard"))

    def _whole(self, sql: str, params: Sequence[Any]) -> str:
        return str(self._cursor.mogrify(translate(sql), _adapt(params)))


def writer_conninfo(dsn: str) -> str:
    """The process's connection string: the settings the run's own connections take
    (``_conn.connect``: no session options from the URL or PGOPTIONS, so a search_path
    given there cannot send the rows to other tables than the run reads), its name, and
    UTF-8, the encoding of the statements and COPY text it sends, whatever PGCLIENTENCODING
    says."""
    from psycopg.conninfo import make_conninfo

    return make_conninfo(
        dsn, application_name="assay-writer", connect_timeout=30, options="", client_encoding="UTF8"
    )


def libpq_path() -> str | None:
    """The libpq this process's psycopg loaded (its own copy, for psycopg[binary]), else
    the system's."""
    import psycopg  # noqa: F401 - loads libpq

    try:
        with open("/proc/self/maps") as maps:
            found = libpq_in_maps(maps)
    except OSError:
        found = None
    return found or ctypes.util.find_library("pq")


def libpq_in_maps(lines: Iterable[str]) -> str | None:
    """The libpq a ``/proc/PID/maps`` names: its path is the sixth field to the line's
    end, spaces included (a virtual environment in a folder with a space)."""
    for line in lines:
        fields = line.rstrip("\n").split(maxsplit=5)
        path = fields[5] if len(fields) == 6 else ""
        if "/libpq" in path and ".so" in path:
            return path
    return None


class InFlight(NamedTuple):
    """A batch sent to the writer process, its answer not read yet."""

    prepared: Sequence[Any]
    stats: ExperimentStats | None
    marking: bool
    statements: Statements
    size: int


class PostgresBatchWriter(ProcessBatchWriter):
    """A run's batches: in this process at first, then through a writer process, the
    next sent before the answer to the one before it (``IN_FLIGHT``); the metric columns
    built by a thread of this process once the last batch is in."""

    # batches sent, their answers not read: the process encodes one while the server stores the other
    IN_FLIGHT = 2

    def __init__(
        self,
        store: PostgresStore,
        experiment_id: uuid.UUID,
        build: BatchStatements,
        *,
        fence: Fence | None = None,
        answer_timeout: float = ANSWER_TIMEOUT_S,
    ) -> None:
        super().__init__(store, experiment_id, build, (), fence=fence, answer_timeout=answer_timeout)
        self._postgres = store
        self._in_flight: deque[InFlight] = deque()
        self._last = False

    @property
    def unconfirmed_rows(self) -> int:
        """Rows sent to the process whose commit is not confirmed yet."""
        return sum(len(batch.prepared) for batch in self._in_flight)

    def ending(self, build_columns: bool) -> None:
        super().ending(build_columns)
        self._last = True

    def write(self, prepared: Sequence[Any], stats: ExperimentStats | None) -> None:
        """``prepared`` and ``stats`` sent to the process, or written here. The answer to
        a batch sent is read once ``IN_FLIGHT`` are sent, or by the run's last batch, or
        ``flush``: a batch's error (its lease refused, the server's) is raised then, and
        the batches sent after it are not stored (the process commits nothing after a
        failed batch: the run fails, or writes them here if the process went)."""
        marking = self._mark_columns
        process = self._usable_process(len(prepared))
        if process is not None and self._send(process, prepared, stats, marking):
            while len(self._in_flight) >= self.IN_FLIGHT or (self._last and self._in_flight):
                self._answer_oldest()
            return
        self.flush()  # what the process was sent commits before rows written here
        self._write_here(prepared, stats, marking)
        self._stored_here(prepared)

    def flush(self) -> None:
        """Every batch sent confirmed committed (or written here), or the error of the
        first that failed raised (the rest not stored)."""
        while self._in_flight:
            self._answer_oldest()

    def _send(
        self, process: WriterProcess, prepared: Sequence[Any], stats: ExperimentStats | None, marking: bool
    ) -> bool:
        log = self._statement_log()
        self._build(log, self._experiment_id, prepared, stats, self._fence)
        if marking:  # the columns' build marked pending with the last rows
            columns.mark_pending(log, str(self._experiment_id))
        try:
            size = process.send_batch(log.statements)
        except WriterProcessError:
            self._give_up()
            return False
        self._in_flight.append(InFlight(prepared, stats, marking, log.statements, size))
        return True

    def _answer_oldest(self) -> None:
        process, batch = self._process, self._in_flight[0]
        assert process is not None
        try:
            process.answer_to(batch.statements, batch.size)
        except WriterProcessError:
            self._give_up()
            return
        except Exception:  # its error answer: the process commits nothing sent after it
            self._in_flight.clear()
            self._give_up()
            raise
        self._by_process(self._in_flight.popleft())

    def _by_process(self, batch: InFlight) -> None:
        self.rows_by_process += len(batch.prepared)
        self._columns_marked = batch.marking
        self._postgres.rows_written(self._experiment_id, len(batch.prepared))

    def _give_up(self) -> None:
        """Write here from now on; each batch the process was sent, in order, is either
        committed (the first of its rows is stored: one transaction) or written here, once
        its server session has ended (its outcome then final). The process commits them in
        the order they were sent, and none after one it did not."""
        self._given_up = True
        process, self._process = self._process, None
        if process is not None:
            process.close()
        if process is None or not self._in_flight:
            return
        try:
            self._end_session_of(process)
            while self._in_flight:
                self._committed_or_written_here(self._in_flight[0])
                self._in_flight.popleft()
        except BaseException:
            self._in_flight.clear()  # the run fails with this error; a resume finds what is stored
            raise

    def _committed_or_written_here(self, batch: InFlight) -> None:
        first_run_id = codec.run_id_of(batch.prepared[0]) if batch.prepared else None
        if first_run_id is not None and self._store.has_run(first_run_id):
            self._by_process(batch)
        else:
            self._write_here(batch.prepared, batch.stats, batch.marking)
            self._stored_here(batch.prepared)

    def _stored_here(self, prepared: Sequence[Any]) -> None:
        self.rows_here += len(prepared)
        self._postgres.rows_written(self._experiment_id, len(prepared))

    def _statement_log(self) -> StatementLog:
        """On this thread's connection, reconnecting first if it was lost (the server
        restarting: as the batches written here ride it out, ``_reconnect``)."""
        return self._postgres.again(lambda: WholeStatements(self._postgres.conn.raw))  # type: ignore[no-any-return]

    def _new_process(self) -> WriterProcess:
        return PostgresWriterProcess(self._postgres.url, self._postgres.dsn, self._answer_timeout)

    def _end_session_of(self, process: WriterProcess) -> None:
        """The server does not notice that a killed client went: a batch the process had
        sent whole (``COMMIT`` included) but the server held (a lock, a slow disk) would
        commit once unblocked, after the run had found none of its rows and written them
        itself (a ``UniqueViolation``, the run failed with every row stored). So its
        session is ended, and gone, before the run looks: its outcome is then final."""
        pid = getattr(process, "backend_pid", None)
        if pid is not None:
            self._postgres.again(lambda: end_session(self._postgres.conn, pid))

    def _write_here(self, prepared: Sequence[Any], stats: ExperimentStats | None, marking: bool) -> None:
        self._postgres.write_batch(self._experiment_id, prepared, stats, self._fence, mark_columns=marking)
        self._columns_marked = marking

    def close(self, *, build_columns: bool = False) -> None:
        """The process stopped; with ``build_columns`` (the run's last batch is written),
        the experiment's metric columns built by a thread of their own once the run has
        finished the experiment (not while its summary evaluators read the rows, in this
        process and on the server), the run not waiting for them."""
        try:
            self.flush()  # raises the error of a batch whose answer was not read yet
        finally:
            process, self._process = self._process, None
            if process is not None:
                process.close()
        if not build_columns:
            return
        experiment_id = str(self._experiment_id)
        if not self._columns_marked:  # else marked with the last batch: no transaction of its own
            with self._postgres.transaction() as conn:
                columns.mark_pending(conn, experiment_id)
        # not a daemon: an interpreter that exits waits for the build
        build = threading.Thread(target=self._build_columns, args=(experiment_id,), name="assay-columns")
        self._postgres.build_columns_when_finished(self._experiment_id, build.start)

    def _build_columns(self, experiment_id: str) -> None:
        try:
            columns.build_marked(self._postgres, experiment_id)
        except Exception:  # noqa: BLE001, S110 - left pending: the first comparison builds them
            pass
        finally:
            self._postgres.drop_connection()


def end_session(conn: Any, pid: int, wait_s: float = 30.0) -> None:
    """End the server session ``pid`` (a writer process's) and wait until it is gone."""
    conn.execute("SELECT pg_terminate_backend(?)", (pid,))
    deadline = time.monotonic() + wait_s
    while conn.execute("SELECT 1 FROM pg_stat_activity WHERE pid = ?", (pid,)).fetchone() is not None:
        if time.monotonic() > deadline:
            raise StoreWriteError(
                f"the writer process's server session {pid} did not end within {wait_s:g} s"
            )
        time.sleep(0.01)


def settle_postgres_writers_of(url: str, run_pid: int) -> None:
    """Wait for the writer processes the dead run ``run_pid`` left on the store at ``url``
    (``sqlite._writer_process.settle_writers_of``)."""
    settle_writers_of(url, run_pid, child=CHILD)
