"""The PostgreSQL writer process: it commits the batches a run's writer thread sends it.

The SQLite writer process's protocol (``sqlite/_writer_child.py``, whose frames, row
encoding and module loading it reuses, loaded by path), on a PostgreSQL connection of
its own, through libpq itself (``ctypes``): ``python -I -S _writer_child.py STORE
RUN_PID LIBPQ ORJSON_HOME`` (STORE, the store's URL without its password, and the run's
pid only name it, for whoever takes a dead run's place; LIBPQ, the library the run's
psycopg loaded). So it is ready in ~30 ms, as SQLite's: importing psycopg took ~0.2 s
of CPU, on the core the server needs. The first frame in is ``(dsn, runs' COPY
columns, results' COPY columns)``: it connects and answers ``READY`` with its server
session's pid (the run ends that session if this process goes while a batch is in
flight: the server would otherwise commit it once unblocked, after the run wrote it too).

Every frame after is one transaction, ``(sql, params, many)`` as SQLite's: the
statements already whole (their values written in by the run's psycopg, ``_writer``),
``many == "guard"`` marking a query that must return a row (the run's lease fence), and
the rows (``_row_text.ROWS``, as ``Store.prepare_row`` gave them), which it encodes and
formats as ``COPY`` text (``_copy_text``). The batch goes as one query: ``BEGIN``, the
guards, a ``COPY`` per table, the rest, ``COMMIT``; the server asks for each table's
rows in turn, so the batch waits for it three times. A guard that returns no row fails
the first ``COPY`` before a row is sent. Answers: ``("ok",)`` once committed; ``("error",
class name, message, SQLSTATE)`` once rolled back (``_Fenced``: a guard refused;
``_NotCopyable``: a row's text cannot be COPY text, and the run writes the batch);
``("lost", message)`` when the connection went, the commit in doubt (the run looks for
the batch's first row, and writes the batch itself if it is not there). After any answer
but ``ok`` it commits nothing more: the batches sent after the failed one are answered
``("skipped",)`` (the run, which reads the failure first, gives the process up and fails
or writes those batches itself), so its commits keep the order they were sent in. A
``None`` frame or the end of input ends it: the transactions it was given are committed
first, answered or not (the run may be gone).

The run sends a batch before it reads the answer to the one before (``_writer``): a
thread reads the frames and encodes each batch (``read_ahead``) while the main thread
sends the one before and waits for the server, so this process's encoding and the
server's inserts run at once, on both cores, instead of one after the other.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import queue
import sys
import threading
from types import ModuleType
from typing import Any, NamedTuple

READY = ("ready", "assay-postgres-writer", 2)
_OK, _TUPLES_OK, _COPY_IN = 0, 2, 4  # ConnStatusType, ExecStatusType
_IDLE = 0  # PGTransactionStatusType
_SQLSTATE = ord("C")
_FENCED = b"assay: the run's lease fence refused the batch"
SKIPPED = ("skipped",)  # a batch sent after one that failed: not committed


def load(path: str, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def libpq(path: str) -> Any:
    """The few libpq calls a batch needs, typed."""
    lib = ctypes.CDLL(path)
    handle, text = ctypes.c_void_p, ctypes.c_char_p
    for name, result, arguments in [
        ("PQconnectdb", handle, [text]),
        ("PQstatus", ctypes.c_int, [handle]),
        ("PQerrorMessage", text, [handle]),
        ("PQfinish", None, [handle]),
        ("PQsendQuery", ctypes.c_int, [handle, text]),
        ("PQgetResult", handle, [handle]),
        ("PQresultStatus", ctypes.c_int, [handle]),
        ("PQntuples", ctypes.c_int, [handle]),
        ("PQresultErrorField", text, [handle, ctypes.c_int]),
        ("PQresultErrorMessage", text, [handle]),
        ("PQclear", None, [handle]),
        ("PQputCopyData", ctypes.c_int, [handle, text, ctypes.c_int]),
        ("PQputCopyEnd", ctypes.c_int, [handle, text]),
        ("PQtransactionStatus", ctypes.c_int, [handle]),
        ("PQbackendPID", ctypes.c_int, [handle]),
    ]:
        function = getattr(lib, name)
        function.restype, function.argtypes = result, arguments
    return lib


#: bytes a ``PQputCopyData`` call sends at most: its length is a C int, and a table's text
#: of 2 GiB or more (rows of base64 images) passed whole wrapped to a negative length,
#: which libpq takes as nothing to send, and the COPY stored no row
COPY_SLICE = 64 << 20


def put_copy_data(lib: Any, conn: Any, data: bytes, slice_bytes: int = COPY_SLICE) -> bool:
    """``data`` sent as COPY data, in slices (COPY's rows may span them)."""
    for start in range(0, len(data), slice_bytes):
        piece = data[start : start + slice_bytes]
        if lib.PQputCopyData(conn, piece, len(piece)) != 1:
            return False
    return True


class _Failed(Exception):
    def __init__(self, message: str, sqlstate: str = "", name: str = "DatabaseError") -> None:
        super().__init__(message)
        self.sqlstate, self.name = sqlstate, name


class _Lost(Exception):
    pass


class Batch(NamedTuple):
    """A transaction made ready to send: its queries, which of them are guards, each
    ``COPY``'s data, and where it is split in two (a batch of no rows: its guards are
    answered before the rest is sent); or the failure that keeps it from being sent."""

    queries: list[str]
    guards: list[bool]
    data: list[bytes]
    split: int = 0
    failure: tuple[Any, ...] | None = None


class Batches:
    """Commits transactions on one connection."""

    def __init__(
        self, lib: Any, conn: int, rows: Any, copy_text: ModuleType, columns: tuple[str, str]
    ) -> None:
        self.lib, self.conn, self.rows, self.copy_text = lib, conn, rows, copy_text
        self.marker = rows.text.ROWS
        self.copies = tuple(
            f"COPY {table} ({names}) FROM STDIN" for table, names in zip(("runs", "results"), columns)
        )

    def prepare(self, statements: list[tuple[str, Any, Any]]) -> Batch:
        """The batch's queries and its rows' COPY text (the reader thread's work, done
        while the server stores the batch before it)."""
        try:
            return self._prepared(statements)
        except _Failed as exc:
            return Batch([], [], [], failure=("error", exc.name, str(exc), exc.sqlstate))
        except Exception as exc:  # noqa: BLE001 - every failure is the sender's to report
            return Batch([], [], [], failure=("error", type(exc).__name__, str(exc), ""))

    def _prepared(self, statements: list[tuple[str, Any, Any]]) -> Batch:
        at = next((i for i, (sql, _, _) in enumerate(statements) if sql == self.marker), len(statements))
        before, after = statements[:at], statements[at + 1 :]
        guards = [False, *(many == "guard" for _, _, many in before)]
        queries, rest = ["BEGIN", *(sql for sql, _, _ in before)], [*(sql for sql, _, _ in after), "COMMIT"]
        if at == len(statements):  # no rows: the guards' answers first, then the rest
            return Batch([*queries, *rest], guards, [], split=len(queries))
        copied = self._copy_ready(statements[at][1])
        data = [b"".join([row.run_text for row in copied]), b"".join([row.results_text for row in copied])]
        return Batch([*queries, *self.copies, *rest], guards, data)

    def commit(self, batch: Batch) -> tuple[Any, ...]:
        if batch.failure is not None:
            return batch.failure
        try:
            self._send(batch)
        except _Lost as exc:
            return ("lost", str(exc))
        except _Failed as exc:
            self._roll_back()
            return ("error", exc.name, str(exc), exc.sqlstate)
        except Exception as exc:  # noqa: BLE001 - every failure is the sender's to report
            self._roll_back()
            return ("error", type(exc).__name__, str(exc), "")
        return ("ok",)

    def _send(self, batch: Batch) -> None:
        if batch.split:
            self._query(batch.queries[: batch.split], batch.guards, [])
            self._query(batch.queries[batch.split :], [], [])
        else:
            self._query(batch.queries, batch.guards, list(batch.data))

    def _copy_ready(self, prepared: list[Any]) -> list[Any]:
        encode, ready, kind = self.rows.encoder.encoded, self.copy_text.copy_ready, self.copy_text.CopyReady
        copied = [ready(encode(item)) for item in prepared]
        if not all(type(row) is kind for row in copied):
            raise _Failed("a row's text cannot be sent as COPY text", name="_NotCopyable")
        return copied

    def _query(self, queries: list[str], guards: list[bool], data: list[bytes]) -> None:
        """``queries`` as one; ``guards[i]``: the i-th must return a row, else the next
        ``COPY`` is failed (or, with none, the query is failed once it is answered)."""
        lib, conn = self.lib, self.conn
        if not lib.PQsendQuery(conn, "; ".join(queries).encode()):
            raise self._lost()
        answered, refused, error = 0, False, None
        while result := lib.PQgetResult(conn):
            status = lib.PQresultStatus(result)
            if status == _COPY_IN:
                chunk = data.pop(0)
                if refused:
                    lib.PQputCopyEnd(conn, _FENCED)
                elif not put_copy_data(lib, conn, chunk) or lib.PQputCopyEnd(conn, None) != 1:
                    lib.PQclear(result)
                    raise self._lost()
            elif status == _TUPLES_OK and answered < len(guards) and guards[answered]:
                refused = refused or lib.PQntuples(result) == 0
            elif status not in (1, _TUPLES_OK):  # not COMMAND_OK: the query failed here
                error = error or _Failed(
                    _text(lib.PQresultErrorMessage(result)).strip(),
                    _text(lib.PQresultErrorField(result, _SQLSTATE)),
                )
            answered += status != _COPY_IN
            lib.PQclear(result)
        if lib.PQstatus(conn) != _OK:
            raise self._lost()
        if refused:
            raise _Failed("guard refused", name="_Fenced")
        if error is not None:
            raise error

    def _roll_back(self) -> None:
        if self.lib.PQtransactionStatus(self.conn) != _IDLE and self.lib.PQstatus(self.conn) == _OK:
            try:
                self._query(["ROLLBACK"], [], [])
            except _Failed:
                pass

    def _lost(self) -> _Lost:
        return _Lost(_text(self.lib.PQerrorMessage(self.conn)).strip() or "the connection was lost")


def _text(value: bytes | None) -> str:
    return value.decode("utf-8", "replace") if value else ""


def main(libpq_path: str, orjson_home: str) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    frames = load(os.path.join(os.path.dirname(here), "sqlite", "_writer_child.py"), "assay_writer_child")
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    setup = frames.receive(source)
    if setup is None:
        return 0
    try:
        lib = libpq(libpq_path)
        dsn, run_columns, result_columns = setup
        conn = lib.PQconnectdb(dsn.encode())
        if lib.PQstatus(conn) != _OK:
            raise ConnectionError(_text(lib.PQerrorMessage(conn)).strip())
        copy_text = load(os.path.join(here, "_copy_text.py"), "assay_writer_copy_text")
        batches = Batches(lib, conn, frames.Rows(orjson_home), copy_text, (run_columns, result_columns))
    except Exception as exc:  # noqa: BLE001 - the sender writes in its own process instead
        frames.reply(sink, ("error", type(exc).__name__, str(exc), ""))
        return 1
    try:
        frames.reply(sink, (*READY, lib.PQbackendPID(conn)))
    except BrokenPipeError:  # the run died while this started: what it handed over still commits
        pass
    ahead: queue.Queue[Batch | None] = queue.Queue(maxsize=1)
    threading.Thread(target=read_ahead, args=(frames, source, batches, ahead), daemon=True).start()
    answering, failed = True, False
    while (batch := ahead.get()) is not None:
        # after a failed batch, those sent after it are answered, not committed: the run
        # reads the failure first (were this process gone, it could not), and gives it up
        answer = SKIPPED if failed else batches.commit(batch)
        failed = failed or answer != ("ok",)
        if answering:
            try:
                frames.reply(sink, answer)
            except BrokenPipeError:  # the run is gone: what it handed over still commits
                answering = False
    lib.PQfinish(conn)
    return 0


def read_ahead(frames: ModuleType, source: Any, batches: Batches, ahead: queue.Queue[Batch | None]) -> None:
    """Read and prepare the next batch while the server stores the one before: the run
    sends a batch before the answer to the one before it (``_writer``), so this process's
    encoding and the server's inserts take both cores. None once the input ends."""
    try:
        while (message := frames.receive(source)) is not None:
            ahead.put(batches.prepare(message))
    finally:
        ahead.put(None)


if __name__ == "__main__":
    # the committing thread wakes from libpq for a moment a result; the reader encodes
    # meanwhile: hand the GIL over within 0.1 ms, not the default 5
    sys.setswitchinterval(1e-4)
    os._exit(main(sys.argv[3], sys.argv[4]))
