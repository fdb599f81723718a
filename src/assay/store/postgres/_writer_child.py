"""The PostgreSQL writer process: it commits the batches a run's writer thread sends it.

The SQLite writer process's protocol (``sqlite/_writer_child.py``, whose frames, row
encoding and module loading it reuses, loaded by path), on a PostgreSQL connection of its
own: ``python -I -S _writer_child.py STORE RUN_PID SYS_PATH`` (STORE, the store's URL
without its password, and the run's pid only name it, for whoever takes a dead run's
place; SYS_PATH, the run's, where psycopg is found). The first frame in is
``(dsn, runs' COPY columns, results' COPY columns)``: it connects and answers ``READY``. Every frame after is one transaction,
the statements already in PostgreSQL's dialect and parameters, but for the rows
(``_row_text.ROWS``: the rows as ``Store.prepare_row`` gave them), which it encodes,
formats as ``COPY`` text (``_copy_text``) and copies, one stream per table; as the run's
own writer thread does (``_batch``): ``BEGIN`` and the guards (the run's lease fence) in
one pipeline, then each table's ``COPY``, then the rest and ``COMMIT`` in one pipeline.
Answers: ``("ok",)`` once committed; ``("error", class name, message, SQLSTATE)`` once
rolled back (``_Fenced``: a guard returned no row; ``_NotCopyable``: a row's text cannot
be sent as COPY text, and the run writes the batch itself); ``("lost", message)`` when
the connection went, the commit in doubt (the run looks for the batch's first row and
writes the batch itself if it is not there). A ``None`` frame or the end of input ends
it: a transaction it was given is committed first, as SQLite's writer does.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from types import ModuleType
from typing import Any

READY = ("ready", "assay-postgres-writer", 1)


def _sqlite_child() -> ModuleType:
    """The SQLite writer process's module (frames, rows, loading by path)."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(os.path.dirname(here), "sqlite", "_writer_child.py")
    spec = importlib.util.spec_from_file_location("assay_writer_child", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _copy_text() -> ModuleType:
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "assay_writer_copy_text", os.path.join(here, "_copy_text.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class _Fenced(Exception):
    """A guard returned no row: the run's lease is not its own any more."""


class _NotCopyable(Exception):
    """A row's text cannot be COPY text (UTF-8 cannot carry it)."""


class Batches:
    """Commits transactions on one connection."""

    def __init__(self, conn: Any, rows: Any, copy_text: ModuleType, columns: tuple[str, str]) -> None:
        self.conn, self.rows, self.copy_text = conn, rows, copy_text
        self.marker = rows.text.ROWS
        self.run_columns, self.result_columns = columns  # each table's COPY column list

    def commit(self, statements: list[tuple[str, Any, Any]]) -> tuple[Any, ...]:
        import psycopg

        try:
            self._run(statements)
        except psycopg.Error as exc:
            if self.conn.closed or self.conn.broken:
                return ("lost", str(exc))
            return ("error", type(exc).__name__, str(exc), exc.sqlstate or "")
        except Exception as exc:  # noqa: BLE001 - every failure is the sender's to report
            return ("error", type(exc).__name__, str(exc), "")
        return ("ok",)

    def _run(self, statements: list[tuple[str, Any, Any]]) -> None:
        at = next((i for i, (sql, _, _) in enumerate(statements) if sql == self.marker), len(statements))
        copied = self._copy_ready(statements[at][1]) if at < len(statements) else None
        conn = self.conn
        try:
            with conn.pipeline():
                conn.execute("BEGIN")
                guards = [self._execute(*statement) for statement in statements[:at]]
            if any(cursor is not None and cursor.fetchone() is None for cursor in guards):
                raise _Fenced("guard refused")
            if copied:
                self._copy("runs", self.run_columns, b"".join([row.run_text for row in copied]))
                self._copy("results", self.result_columns, b"".join([row.results_text for row in copied]))
            with conn.pipeline():
                for statement in statements[at + 1 :]:
                    self._execute(*statement)
                conn.execute("COMMIT")
        except BaseException:
            self._roll_back()
            raise

    def _copy_ready(self, prepared: list[Any]) -> list[Any]:
        encode, ready, kind = self.rows.encoder.encoded, self.copy_text.copy_ready, self.copy_text.CopyReady
        copied = [ready(encode(item)) for item in prepared]
        if not all(type(row) is kind for row in copied):
            raise _NotCopyable("a row's text cannot be sent as COPY text")
        return copied

    def _execute(self, sql: str, params: Any, many: Any) -> Any:
        """A guard's cursor (its row read once the pipeline is sent); None for the rest."""
        if many is True:
            self.conn.cursor().executemany(sql, params)
            return None
        cursor = self.conn.execute(sql, params)
        return cursor if many == "guard" else None

    def _copy(self, table: str, columns: str, data: bytes) -> None:
        if data:
            with self.conn.cursor().copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                copy.write(data)

    def _roll_back(self) -> None:
        import psycopg

        conn = self.conn
        if conn.closed or conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            return
        try:
            conn.execute("ROLLBACK")
        except psycopg.Error:
            pass


def main(sys_path: str) -> int:
    sys.path.extend(part for part in sys_path.split(os.pathsep) if part)
    frames = _sqlite_child()
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    setup = frames.receive(source)
    if setup is None:
        return 0
    try:
        import psycopg

        rows = frames.Rows(sys.path[-1])  # orjson is on the run's path, added above
        dsn, run_columns, result_columns = setup
        conn = psycopg.connect(dsn, autocommit=True, application_name="assay-writer", connect_timeout=30)
        batches = Batches(conn, rows, _copy_text(), (run_columns, result_columns))
    except Exception as exc:  # noqa: BLE001 - the sender writes in its own process instead
        frames.reply(sink, ("error", type(exc).__name__, str(exc), ""))
        return 1
    try:
        frames.reply(sink, READY)
    except BrokenPipeError:  # the run died while this started: what it handed over still commits
        pass
    try:
        while (message := frames.receive(source)) is not None:
            answer = batches.commit(message)
            frames.reply(sink, answer)
            if answer[0] == "lost":
                break
    except BrokenPipeError:  # the run is gone; what it handed over is committed
        pass
    conn.close()
    return 0


if __name__ == "__main__":
    os._exit(main(sys.argv[3]))
