"""A run's batches committed by a writer process, off the run's interpreter.

The SQLite insert of a row costs about as much CPU as everything else the row does, and
in the run's process it is paid under the GIL its row threads need (its thread gets the
GIL back only when they let it go, so a batch takes several times its CPU). A second
process does the same inserts on the other core: the writer thread turns each batch into
its list of statements (the same ones, built by the same code), pickles it, and waits,
without the GIL, for the commit. A run that dies leaves the process its last batch and
an end of input: it commits, then exits.

Small runs never pay for it: the process starts with the batch that brings the run to
``spawn_after`` rows, and batches go on in this process while it starts (~25 ms). If it fails,
the batch it had is written here unless it was already committed, and so are the rest.
"""

from __future__ import annotations

import contextlib
import pickle
import select
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from assay.store.records import ExperimentStats

if TYPE_CHECKING:
    from assay.store.sqlite import SQLiteStore

__all__ = ["ProcessBatchWriter", "StatementLog", "WriterProcessError"]

SPAWN_AFTER_ROWS = 500
ANSWER_TIMEOUT_S = 120.0  # a commit waits on the child's 30 s busy timeout at most
_CHILD = Path(__file__).with_name("_sqlite_writer_child.py")
_HEADER_SIZE = 8


class WriterProcessError(RuntimeError):
    """The writer process ended or answered out of turn: its last batch is in doubt."""


class StatementLog:
    """Stands in for a connection while a batch's statements are built: records them."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, Any, bool]] = []

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.statements.append((sql, params, False))

    def executemany(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
        self.statements.append((sql, list(params), True))


class WriterProcess:
    """One child running ``_sqlite_writer_child.py`` on the database at ``path``."""

    def __init__(self, path: str, pragmas: Sequence[str], answer_timeout: float = ANSWER_TIMEOUT_S) -> None:
        # its own session: a Ctrl-C to the terminal's group interrupts the run, which
        # then flushes through this process; the process itself stops at end of input
        self._proc = subprocess.Popen(
            [sys.executable, "-I", "-S", str(_CHILD), path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._state = "starting"
        self._answer_timeout = answer_timeout
        self._busy_since: float | None = None
        self._stalled = False
        self._closed = threading.Event()
        threading.Thread(target=self._watch, name="assay-writer-watchdog", daemon=True).start()
        self.send(list(pragmas))

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode

    def state(self) -> str:
        """``"starting"``, ``"ready"`` (it has opened the database) or ``"failed"``;
        never waits for it."""
        if self._state == "starting":
            if self._answer_waiting():
                try:
                    self._state = "ready" if self.receive() == ("ready",) else "failed"
                except WriterProcessError:
                    self._state = "failed"
            elif self._proc.poll() is not None:
                self._state = "failed"
        return self._state

    def commit(self, statements: list[tuple[str, Any, bool]]) -> None:
        """Commit one transaction; raises the sqlite3 error the child met, rolled back,
        or ``WriterProcessError`` when the child is gone, or was killed for not
        answering in time (stopped, or stuck)."""
        self._busy_since = time.monotonic()
        try:
            self.send(statements)
            answer = self.receive()
        finally:
            self._busy_since = None
        if answer == ("ok",):
            return
        if isinstance(answer, tuple) and len(answer) == 3 and answer[0] == "error":
            error_class = getattr(sqlite3, str(answer[1]), sqlite3.DatabaseError)
            raise error_class(str(answer[2]))
        raise WriterProcessError(f"the SQLite writer process answered {answer!r}")

    def close(self, timeout: float = 5.0) -> None:
        """Tell it to stop and wait for it to exit (killed if it does not in time). The
        stop is a frame, not only the end of input: a process forked from the run while
        it wrote (a multiprocessing pool) holds the pipe open. One that never became
        ready has nothing of ours: it is killed at once."""
        self._closed.set()
        if self._state != "ready":
            self._proc.kill()
        with contextlib.suppress(WriterProcessError):
            self.send(None)
        with contextlib.suppress(OSError):
            self._stdin.close()
        try:
            self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        with contextlib.suppress(OSError):
            self._stdout.close()

    @property
    def _stdin(self) -> IO[bytes]:
        assert self._proc.stdin is not None
        return self._proc.stdin

    @property
    def _stdout(self) -> IO[bytes]:
        assert self._proc.stdout is not None
        return self._proc.stdout

    def _answer_waiting(self) -> bool:
        readable, _, _ = select.select([self._stdout], [], [], 0)
        return bool(readable)

    def send(self, message: Any) -> None:
        body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self._stdin.write(len(body).to_bytes(_HEADER_SIZE, "little") + body)
            self._stdin.flush()
        except (BrokenPipeError, ValueError) as exc:
            raise self._gone() from exc

    def receive(self) -> Any:
        header = self._stdout.read(_HEADER_SIZE)
        if len(header) < _HEADER_SIZE:
            raise self._gone()
        size = int.from_bytes(header, "little")
        body = self._stdout.read(size)
        if len(body) < size:
            raise self._gone()
        return pickle.loads(body)

    def _watch(self) -> None:
        """Kill the child when a commit has waited longer than the answer timeout: a
        stopped or stuck process must not hang the run (it then writes here)."""
        while not self._closed.wait(self._answer_timeout / 4):
            started = self._busy_since
            if started is not None and time.monotonic() - started > self._answer_timeout:
                self._stalled = True
                self._proc.kill()
                return

    def _gone(self) -> WriterProcessError:
        code = self._proc.poll()
        how = "is still running" if code is None else f"exited with status {code}"
        if self._stalled:
            how = f"did not answer within {self._answer_timeout:g} s and was killed"
        return WriterProcessError(f"the SQLite writer process (pid {self._proc.pid}) {how}")


BatchStatements = Callable[[Any, uuid.UUID, Sequence[Any], ExperimentStats | None], None]
"""Builds a batch's statements on a connection (or a ``StatementLog``)."""


class ProcessBatchWriter:
    """A run's batches: in this process at first, then through a writer process."""

    def __init__(
        self,
        store: SQLiteStore,
        experiment_id: uuid.UUID,
        build: BatchStatements,
        pragmas: Sequence[str],
        *,
        spawn_after: int = SPAWN_AFTER_ROWS,
        answer_timeout: float = ANSWER_TIMEOUT_S,
    ) -> None:
        self._store = store
        self._experiment_id = experiment_id
        self._build = build
        self._pragmas = pragmas
        self._spawn_after = spawn_after
        self._answer_timeout = answer_timeout
        self._process: WriterProcess | None = None
        self._given_up = False
        self.rows_here = 0
        self.rows_by_process = 0

    @property
    def process(self) -> WriterProcess | None:
        return self._process

    @property
    def process_pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def write(self, prepared: Sequence[Any], stats: ExperimentStats | None) -> None:
        process = self._usable_process(len(prepared))
        if process is not None:
            log = StatementLog()
            self._build(log, self._experiment_id, prepared, stats)
            try:
                process.commit(log.statements)
                self.rows_by_process += len(prepared)
                return
            except WriterProcessError:
                self._give_up()
                first_run_id = prepared[0][0][0] if prepared else None
                if first_run_id is not None and self._store.has_run(first_run_id):
                    self.rows_by_process += len(prepared)
                    return  # it committed the batch (all of it: one transaction) before it went
        self._store.write_batch(self._experiment_id, prepared, stats)
        self.rows_here += len(prepared)

    def close(self) -> None:
        if self._process is not None:
            self._process.close()
            self._process = None

    def _usable_process(self, rows: int) -> WriterProcess | None:
        if self._given_up:
            return None
        if self._process is None:
            if self.rows_here + rows < self._spawn_after:
                return None
            try:
                self._process = WriterProcess(self._store.path, self._pragmas, self._answer_timeout)
            except (OSError, WriterProcessError):
                self._given_up = True
                return None
        state = self._process.state()
        if state == "failed":
            self._give_up()
        return self._process if state == "ready" else None

    def _give_up(self) -> None:
        self._given_up = True
        self.close()
