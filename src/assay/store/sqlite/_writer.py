"""A run's batches committed by a writer process, off the run's interpreter.

The SQLite insert of a row costs about as much CPU as everything else the row does, and
in the run's process it is paid under the GIL its row threads need (its thread gets the
GIL back only when they let it go, so a batch takes several times its CPU). A second
process does the same inserts on the other core: the writer thread turns each batch into
its list of statements (the same ones, built by the same code) with its rows as the row
threads prepared them (pickled plain fields, which the process encodes with the same
code, ``_row_text``), pickles it, and waits, without the GIL, for the commit. A run that
dies leaves the process its last batch and an end of input: it commits, then exits
(``_writer_process`` has the process itself).

Small runs never pay for it: the process starts when the run says it has at least
``spawn_after`` rows to write (``expect``), or else with the batch that brings the run
to that many, and batches go on in this process while it starts (~30 ms). If it fails,
the batch it had is written here unless it was already committed, and so are the rest.
A run of inline data has its process started earlier still, before its data is stored
(``WarmWriter``): the process starts on the other core while this one stores the data,
and the run's first batch goes to it. Inline data's examples are handed to it too, once
the run's experiment and lease are stored (``SQLiteStore.release_held_examples``): it
commits them while the run starts its rows, and before any of them, wherever they are
written (``WriterProcess.settle``). A finished run's last batch, when the process
commits it, marks the experiment's metric columns pending in the same transaction: the
process then builds them as it stops, and the run's end waits for no commit of its own
for the mark.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from assay.store import _codec as codec
from assay.store import _columns as columns
from assay.store._row_text import ROWS
from assay.store.fence import Fence
from assay.store.records import ExperimentStats
from assay.store.sqlite._writer_process import (
    ANSWER_TIMEOUT_S,
    Statements,
    WriterProcess,
    WriterProcessError,
)

if TYPE_CHECKING:
    from assay.store.sqlite import SQLiteStore

__all__ = ["ProcessBatchWriter", "StatementLog", "WarmWriter"]

SPAWN_AFTER_ROWS = 500


class StatementLog:
    """Stands in for a connection while a batch's statements are built: records them."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, Any, bool | str]] = []

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.statements.append((sql, params, False))

    def executemany(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
        self.statements.append((sql, list(params), True))

    def guard(self, sql: str, params: Sequence[Any]) -> None:
        """A query that must return a row, or the process refuses the whole batch."""
        self.statements.append((sql, params, "guard"))

    def rows(self, prepared: Sequence[Any]) -> None:
        """A batch of ``Store.prepare_row`` rows, encoded and inserted by the process."""
        self.statements.append((ROWS, list(prepared), True))


BatchStatements = Callable[[Any, uuid.UUID, Sequence[Any], ExperimentStats | None, Fence | None], None]
"""Builds a batch's statements on a connection (or a ``StatementLog``), behind the
run's lease fence (``assay.store.fence``) when it has one."""


class WarmWriter:
    """At most one writer process started ahead of a run, for the run's batch writer to
    take (``Store.warm_writer``): the same process it would start, only sooner. One not
    taken waits, idle and holding no lock, for the next run, or is stopped with the store.
    A process forked from the one that started it sees none (its pipes are not its own)."""

    def __init__(self, path: str, pragmas: Sequence[str], answer_timeout: float = ANSWER_TIMEOUT_S) -> None:
        self._path, self._pragmas, self._answer_timeout = path, pragmas, answer_timeout
        self._lock = threading.Lock()
        self._process: WriterProcess | None = None
        self._owner = 0  # the pid that started it

    def start(self, rows: int) -> None:
        """Start one for a run of ``rows`` rows, if such a run would have one and none
        waits already. A process that cannot start is no error: the run starts its own."""
        if rows < SPAWN_AFTER_ROWS:
            return
        with self._lock:
            if self._usable():
                return
            self._drop()
            try:
                self._process = WriterProcess(self._path, self._pragmas, self._answer_timeout)
            except (OSError, WriterProcessError):
                return
            self._owner = os.getpid()

    def waiting(self) -> bool:
        """Whether a process waits for a run to take it."""
        with self._lock:
            return self._usable()

    def hand(self, statements: Statements, replay: Callable[[Statements], None]) -> bool:
        """Hand one transaction to the waiting process (``WriterProcess.hand``): it
        commits it before whatever the run that takes it writes. False if none waits."""
        with self._lock:
            if not self._usable():
                return False
            assert self._process is not None
            self._process.hand(statements, replay)
            return True

    def settle(self) -> None:
        """What was handed to the waiting process is committed (``WriterProcess.settle``)."""
        with self._lock:
            if self._process is not None and self._owner == os.getpid():
                self._process.settle()

    def take(self) -> WriterProcess | None:
        """The waiting process (None if there is none, or it failed), now the caller's."""
        with self._lock:
            if not self._usable():
                self._drop()
                return None
            process, self._process = self._process, None
        return process

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _drop(self) -> None:
        """Forget the waiting process, stopping it if it is this process's."""
        process, self._process = self._process, None
        if process is not None and self._owner == os.getpid():
            process.close()

    def _usable(self) -> bool:
        process = self._process
        return (
            process is not None
            and self._owner == os.getpid()
            and process.state() != "failed"
            and process.running()
        )


class ProcessBatchWriter:
    """A run's batches: in this process at first, then through a writer process."""

    def __init__(
        self,
        store: SQLiteStore,
        experiment_id: uuid.UUID,
        build: BatchStatements,
        pragmas: Sequence[str],
        *,
        fence: Fence | None = None,
        spawn_after: int = SPAWN_AFTER_ROWS,
        answer_timeout: float = ANSWER_TIMEOUT_S,
        warm: WarmWriter | None = None,
    ) -> None:
        self._store = store
        self._experiment_id = experiment_id
        self._build = build
        self._fence = fence
        self._pragmas = pragmas
        self._spawn_after = spawn_after
        self._answer_timeout = answer_timeout
        self._warm = warm  # a process started ahead of this run, if any: taken first
        self._process: WriterProcess | None = None
        self._given_up = False
        self._mark_columns = False  # the next batch is a finished run's last
        self._columns_marked = False  # committed with it, by the process
        self.rows_here = 0
        self.rows_by_process = 0

    @property
    def process(self) -> WriterProcess | None:
        return self._process

    @property
    def process_pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def expect(self, rows: int) -> None:
        if rows >= self._spawn_after and self._process is None and not self._given_up:
            self._start()

    def ending(self, build_columns: bool) -> None:
        self._mark_columns = build_columns

    @property
    def unconfirmed_rows(self) -> int:
        return 0  # ``write`` returns once its batch is committed

    def flush(self) -> None:
        pass

    def write(self, prepared: Sequence[Any], stats: ExperimentStats | None) -> None:
        marking = self._mark_columns
        process = self._usable_process(len(prepared))
        if process is not None:
            log = self._statement_log()
            self._build(log, self._experiment_id, prepared, stats, self._fence)
            if marking:  # the columns' build marked pending with the last rows
                columns.mark_pending(log, str(self._experiment_id))
            try:
                process.commit(log.statements)
                self.rows_by_process += len(prepared)
                self._columns_marked = marking
                return
            except WriterProcessError:
                self._give_up()  # on SQLite its transaction died with it
                first_run_id = codec.run_id_of(prepared[0]) if prepared else None
                if first_run_id is not None and self._store.has_run(first_run_id):
                    self.rows_by_process += len(prepared)
                    self._columns_marked = marking
                    return  # it committed the batch (all of it: one transaction) before it went
        self._write_here(prepared, stats, marking)
        self.rows_here += len(prepared)

    def _statement_log(self) -> StatementLog:
        return StatementLog()

    def _write_here(self, prepared: Sequence[Any], stats: ExperimentStats | None, marking: bool) -> None:
        """A batch written in this process (the columns' mark is left to ``close``)."""
        self._store.write_batch(self._experiment_id, prepared, stats, self._fence)

    def _new_process(self) -> WriterProcess:
        return WriterProcess(self._store.path, self._pragmas, self._answer_timeout)

    def close(self, *, build_columns: bool = False) -> None:
        """With ``build_columns`` (the run's last batch is written), a writer process
        builds the experiment's metric columns as it stops, without the run waiting for
        them; the store's ``finish_experiment`` then sees them built, or pending."""
        if self._process is None:
            return
        if build_columns:
            self._process.close_building_columns(str(self._experiment_id), marked=self._columns_marked)
        else:
            self._process.close()
        self._process = None

    def _usable_process(self, rows: int) -> WriterProcess | None:
        if self._given_up:
            return None
        if self._process is None:
            if self.rows_here + rows < self._spawn_after or not self._start():
                return None
        assert self._process is not None
        self._process.settle()  # what it was handed commits before these rows, wherever they go
        state = self._process.state()
        if state == "failed":
            self._give_up()
        return self._process if state == "ready" else None

    def _start(self) -> bool:
        warm = self._warm.take() if self._warm is not None else None
        if warm is not None:
            self._process = warm
            return True
        try:
            self._process = self._new_process()
        except (OSError, WriterProcessError):
            self._given_up = True
            return False
        return True

    def _give_up(self) -> None:
        self._given_up = True
        self.close()
