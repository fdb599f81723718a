"""The SQLite writer process: it commits the transactions a run's writer thread sends it.

Run by path (``python -I -S _writer_child.py DB RUN_PID ORJSON_HOME``; the run's
pid only names it, for whoever takes a dead run's place) with the standard library and
orjson only (found in ORJSON_HOME), so it is ready in ~30 ms and shares nothing with the
run's interpreter but the database file. Frames on stdin and stdout are an 8-byte
little-endian length and a pickle. The first frame in is the connection's PRAGMAs; it
answers ``READY``. Every frame after is one transaction, a list of ``(sql, params,
many)`` (where ``sql`` is ``_row_text.ROWS``, ``params`` are rows for it to encode and
insert, as ``Store.prepare_row`` gave them; where ``many`` is ``"guard"``, a query
that must return a row, else the transaction is refused: a run's lease fence), answered with
``("ok",)`` once committed, or ``("error", class name, message)`` once rolled back. A
``None`` frame (the run is done) or the end of input (the run died) ends it: a
transaction it was given is committed first, so a killed run loses no row it had
handed over. A ``("columns", experiment_id, marked)`` frame, sent after a run's last
batch, asks for the experiment's metric columns (``_columns``, loaded by path): it answers
``("ok",)`` once their build is marked pending, then builds them while the run goes on;
``marked``: the last batch's transaction marked it, and it answers nothing.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import sqlite3
import struct
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any, BinaryIO

HEADER = struct.Struct("<Q")
READY = ("ready", "assay-sqlite-writer", 1)
Statement = tuple[str, Any, Any]
"""``(sql, params, many)``: see the module's docstring."""


def receive(stream: BinaryIO) -> Any | None:
    """The next frame, or None at end of input (a frame cut short counts as the end)."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    body = stream.read(size)
    return pickle.loads(body) if len(body) == size else None


def reply(stream: BinaryIO, message: tuple[Any, ...]) -> None:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(HEADER.pack(len(body)) + body)
    stream.flush()


class Rows:
    """What encodes and inserts a batch of rows: the run's own code (``_row_text``, with
    the store's JSON, ``_json``), loaded by path."""

    def __init__(self, orjson_home: str) -> None:
        sys.path.append(orjson_home)  # _json's one import beyond the standard library
        json = load("_json")
        self.text = load("_row_text")
        self.encoder = self.text.RowEncoder(json.dumps, json.safe_repr)

    def encoded(self, statements: list[Statement]) -> list[Statement]:
        """The transaction with its rows encoded (before it starts: none of it needs the
        write lock)."""
        rows = self.text.ROWS
        encode = self.encoder.encoded
        return [
            (sql, [encode(item) for item in params], many) if sql == rows else (sql, params, many)
            for sql, params, many in statements
        ]

    def insert(self, conn: sqlite3.Connection, encoded: list[Any]) -> None:
        self.text.insert_encoded(conn, encoded)


def bind_none_quickly() -> None:
    """Bind ``None`` through an adapter: ``sqlite3`` binds exact ints, floats and strings
    at once, but looks anything else up as a type to adapt, and for ``None`` that lookup
    fails the slow way (~0.8 us; ~17 times a row of the core benchmark), where an adapter
    found in its registry takes ~0.25. The adapter gives ``None`` back, which binds NULL
    as before. Process-wide: this process is the writer's alone."""
    nothing: dict[None, None] = {}
    sqlite3.register_adapter(type(None), nothing.get)  # a C call: nothing.get(None) is None


class _Fenced(Exception):
    """A guard returned no row: the run's lease is not its own any more (the name is
    what the run maps back to its own error class)."""


def commit(conn: sqlite3.Connection, statements: list[Statement], rows: Rows) -> tuple[Any, ...]:
    try:
        _run(conn, rows.encoded(statements), rows)
    except Exception as exc:  # noqa: BLE001 - every failure is the sender's to report
        return ("error", type(exc).__name__, str(exc))
    return ("ok",)


def _run(conn: sqlite3.Connection, statements: list[Statement], rows: Rows) -> None:
    """The statements in one transaction, rolled back whole on any failure."""
    try:
        conn.execute("BEGIN IMMEDIATE")
        for sql, params, many in statements:
            if sql == rows.text.ROWS:
                rows.insert(conn, params)
            elif many == "guard":
                if conn.execute(sql, params).fetchone() is None:
                    raise _Fenced(f"guard refused: {params!r:.200}")
            elif many:
                conn.executemany(sql, params)
            else:
                conn.execute(sql, params)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


class OwnStore:
    """What ``_columns`` builds with: transactions and snapshots on this connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN")
        try:
            yield self.conn
        finally:
            self.conn.execute("COMMIT")


def columns_module() -> ModuleType:
    return load("_columns")


def load(name: str) -> ModuleType:
    """The store's module ``name``, from the folder above this one."""
    store = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # assay/store/, above sqlite/
    path = os.path.join(store, f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"assay_writer{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


class ColumnsPreload:
    """Loads ``_columns`` in a thread from the start (~15 ms of imports, mostly while the
    first commits wait in SQLite without the GIL), rather than while the run's end waits
    for the answer to "columns"."""

    def __init__(self) -> None:
        self._module: ModuleType | None = None
        self._thread = threading.Thread(target=self._load, daemon=True)
        self._thread.start()

    def _load(self) -> None:
        try:
            self._module = columns_module()
        except Exception:  # noqa: BLE001, S110 - loaded again, and its failure answered, on "columns"
            pass

    def module(self) -> ModuleType | None:
        self._thread.join()
        return self._module


def build_columns(
    conn: sqlite3.Connection,
    experiment_id: str,
    sink: BinaryIO,
    columns: ModuleType | None,
    *,
    marked: bool = False,
) -> None:
    """Mark the build pending and answer (``marked``: the run's last batch marked it,
    and the run waits for no answer), then build. A build that fails leaves the mark
    pending: the first comparison of the experiment builds its columns instead.
    ``columns``: the module, loaded ahead (None: it could not be, so try again here)."""
    store = OwnStore(conn)
    if not marked:
        try:
            columns = columns or columns_module()
            with store.transaction() as marking:
                columns.mark_pending(marking, experiment_id)
        except Exception as exc:  # noqa: BLE001 - the run builds them itself
            reply(sink, ("error", type(exc).__name__, str(exc)))
            return
        reply(sink, ("ok",))
    try:
        columns = columns or columns_module()
        columns.build_marked(store, experiment_id)
    except Exception:  # noqa: BLE001, S110 - see the docstring
        pass


def main(path: str, orjson_home: str) -> int:
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    pragmas = receive(source)
    if pragmas is None:
        return 0
    try:
        rows = Rows(orjson_home)
        bind_none_quickly()
        conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        for pragma in pragmas:
            conn.execute(pragma)
    except Exception as exc:  # noqa: BLE001 - the sender writes in its own process instead
        reply(sink, ("error", type(exc).__name__, str(exc)))
        return 1
    try:
        reply(sink, READY)
    except BrokenPipeError:  # the run died while this started: what it handed over still commits
        pass
    preload = ColumnsPreload()
    try:
        while (message := receive(source)) is not None:
            if isinstance(message, tuple) and message[0] == "columns":
                marked = len(message) > 2 and message[2] is True
                build_columns(conn, str(message[1]), sink, preload.module(), marked=marked)
            else:
                reply(sink, commit(conn, message, rows))
    except BrokenPipeError:  # the run is gone; what it handed over is committed
        pass
    conn.close()
    return 0


if __name__ == "__main__":
    # everything is committed and answered: skip the interpreter's teardown (~6 ms the
    # run's close would wait for)
    os._exit(main(sys.argv[1], sys.argv[3]))
