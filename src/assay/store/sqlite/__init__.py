"""The embedded store: one SQLite file (WAL mode), one connection per thread."""

from __future__ import annotations

import functools
import itertools
import os
import random
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from assay.errors import (
    AlreadyExistsError,
    DataError,
    NotFoundError,
    StoreCorruptError,
    StoreError,
    StoreVersionError,
)
from assay.schemas import Dataset, EvaluationResult, Example, utcnow
from assay.store import _codec as codec
from assay.store import _columns as columns
from assay.store import fence as fences
from assay.store import integrity, text_index
from assay.store._json import dumps, loads
from assay.store._leases import LeaseQueries
from assay.store._schema import MIGRATIONS, SCHEMA_VERSION
from assay.store.base import BatchWriter, ExampleValues, Store
from assay.store.fence import Fence
from assay.store.records import ComparisonRecord, ExperimentRecord, ExperimentRow, ExperimentStats, LeaseClaim
from assay.store.sqlite import _attachments as attachments
from assay.store.sqlite import _examples as example_rows
from assay.store.sqlite import _rows as rows
from assay.store.sqlite._feedback import SQLiteFeedback
from assay.store.sqlite._traced import SQLiteTracedRuns
from assay.store.sqlite._writer import ProcessBatchWriter, StatementLog, WarmWriter
from assay.store.sqlite._writer_process import settle_writers_of

_PAGE = 2000
# FULL: each commit waits for the write-ahead log to reach the disk (fsync), so a batch
# reported committed survives power loss; NORMAL gives that up for the last commits
# (see docs/durability.md, bench/durability.py). ASSAY_SQLITE_SYNCHRONOUS chooses.
_SYNCHRONOUS = ("FULL", "NORMAL", "OFF", "EXTRA")


def _synchronous() -> str:
    chosen = os.environ.get("ASSAY_SQLITE_SYNCHRONOUS", "FULL").strip().upper() or "FULL"
    if chosen not in _SYNCHRONOUS:
        raise StoreError(
            f"ASSAY_SQLITE_SYNCHRONOUS={chosen!r}: give one of {', '.join(_SYNCHRONOUS)} "
            "(FULL, the default, keeps every committed batch through power loss)"
        )
    return chosen


def _busy_timeout() -> float:
    """Seconds a write waits for another process's write to end: ASSAY_SQLITE_BUSY_TIMEOUT, else 30."""
    text = os.environ.get("ASSAY_SQLITE_BUSY_TIMEOUT", "").strip()
    try:
        seconds = float(text) if text else 30.0
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:
        raise StoreError(f"ASSAY_SQLITE_BUSY_TIMEOUT={text!r}: give the seconds to wait for a lock, e.g. 30")
    return seconds


_FILE_PRAGMAS = ("PRAGMA foreign_keys = ON", "PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL")


def _file_pragmas() -> tuple[str, ...]:
    """Each connection's settings, a writer process's included."""
    return (*_FILE_PRAGMAS[:-1], f"PRAGMA synchronous = {_synchronous()}")


__all__ = ["SQLiteStore"]


#: An example's current version by its id alone: the datasets first, then a probe of each
#: one's (dataset_id, id) index, instead of a scan of every example (an index led by the id
#: would cost every inserted example another random B-tree insert: ~8 us at 300k).
_CURRENT_EXAMPLE_BY_ID = (
    "SELECT e.* FROM datasets d CROSS JOIN examples e "
    "WHERE e.dataset_id = d.id AND e.id = ? AND e.removed_version IS NULL"
)


class SQLiteStore(SQLiteFeedback, SQLiteTracedRuns, LeaseQueries, Store):
    _warm: WarmWriter | None = None  # a file's writer process started ahead of a run
    _held: list[list[tuple[str, Any, bool | str]]] = []  # ``_add_first_examples``, oldest first

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path == ":memory:":
            # Connections of one process share a named in-memory database.
            self._target, self._uri = f"file:assay-{uuid.uuid4().hex}?mode=memory&cache=shared", True
        else:
            self.path = str(Path(self.path).resolve())
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._target, self._uri = self.path, False
        self.url = "sqlite://" if self.path == ":memory:" else f"sqlite:///{self.path}"
        # Before this process's own connection: did the last writer close? If not, its
        # log is checked now, since closing a read-write connection would copy the log
        # into the file: a damaged store is then opened read-only (``require_whole``).
        self._unclean = not self._uri and integrity.left_unclean(self.path)
        self._damage = integrity.check(self.path) if self._unclean else []
        if self._damage:
            self._target, self._uri = f"file:{quote(self.path)}?mode=ro", True
        self._pragmas = _file_pragmas()
        self._busy = _busy_timeout()
        self._local = threading.local()
        # Shared-cache memory databases answer a second writer with SQLITE_LOCKED at once
        # (no busy timeout), so their writers take turns in the process instead.
        self._memory_writer = threading.Lock() if self._uri else None
        self._keepalive = self._connect() if self._damage else self._open_and_migrate()
        self._warm = None if self._uri else WarmWriter(self.path, self._pragmas)
        self._held_lock = threading.Lock()

    def _open_and_migrate(self) -> sqlite3.Connection:
        """Open the first connection and bring the schema up to date. Processes creating
        one new store at once can get SQLITE_BUSY without the busy handler (switching the
        journal to WAL, or two readers upgrading to writers): try again, for a while."""
        deadline = time.monotonic() + 30
        while True:
            conn: sqlite3.Connection | None = None
            try:
                conn = self._connect()
                self._migrate(conn)
                return conn
            except sqlite3.OperationalError as exc:
                if conn is not None:
                    conn.close()
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.01 + random.random() * 0.05)

    def require_whole(self, *, thorough: bool = False) -> None:
        if self._damage:
            raise StoreCorruptError(integrity.corrupt_message(self.path, self._damage))
        if not self._uri and not self._unclean:  # an unclean store was checked on opening
            integrity.require_whole(self.path, always=thorough)

    # connections
    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self._target, uri=self._uri, isolation_level=None, check_same_thread=False, timeout=self._busy
        )
        conn.row_factory = sqlite3.Row
        if self._uri:
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA read_uncommitted = 1")  # readers take no table locks
        else:
            for pragma in self._pragmas:
                conn.execute(pragma)
        return conn

    @property
    def conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        if self._memory_writer is None:
            with _immediate(self.conn) as conn:
                yield conn
            return
        with self._memory_writer, _immediate(self.conn) as conn:
            yield conn

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """Several reads that see one state of the database (no half-written batch)."""
        conn = self.conn
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    def _migrate(self, conn: sqlite3.Connection) -> None:
        if self._schema_version(conn) == SCHEMA_VERSION:
            return
        # Re-read the version inside the write transaction: another process may be
        # creating the same store right now. Version and DDL commit together.
        with _immediate(conn):
            version = self._schema_version(conn)
            if version > SCHEMA_VERSION:
                raise StoreVersionError(
                    f"the store at {self.path} has schema version {version}, newer than this "
                    f"assay understands ({SCHEMA_VERSION}); upgrade assay to open it"
                )
            for index in range(version, SCHEMA_VERSION):
                for statement in _statements(MIGRATIONS[index]):
                    conn.execute(statement)
                conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                    (str(index + 1),),
                )

    @staticmethod
    def _schema_version(conn: sqlite3.Connection) -> int:
        has_meta = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
        ).fetchone()
        if not has_meta:
            return 0
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        if self._warm is not None:
            self.release_held_examples()
            self._warm.close()  # once what it was handed is committed
        self.drop_connection()
        self._keepalive.close()

    def drop_connection(self) -> None:
        """Close this thread's connection (a thread that is done with the store): left to
        the thread's end, it is freed by the cyclic collector (its statement cache refers
        back to it), which may come long after."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            self._local.conn = None
            conn.close()

    # datasets
    def create_dataset(
        self, name: str, description: str | None = None, metadata: dict[str, Any] | None = None
    ) -> Dataset:
        dataset = Dataset(name=name, description=description, metadata=metadata or {})
        try:
            with self.transaction() as conn:
                conn.execute(
                    "INSERT INTO datasets (id, name, description, metadata, created_at, version) "
                    "VALUES (?, ?, ?, ?, ?, 0)",
                    (str(dataset.id), name, description, dumps(metadata), codec.ts(dataset.created_at)),
                )
        except sqlite3.IntegrityError:
            raise AlreadyExistsError(f"a dataset named {name!r} already exists") from None
        return dataset

    def get_dataset(self, *, name: str | None = None, id: uuid.UUID | None = None) -> Dataset | None:
        column, value = ("id", str(id)) if id is not None else ("name", name)
        row = self.conn.execute(_DATASET_QUERY + f" WHERE d.{column} = ?", (value,)).fetchone()
        return _dataset_from(row) if row else None

    def list_datasets(self) -> list[Dataset]:
        rows = self.conn.execute(_DATASET_QUERY + " ORDER BY d.created_at").fetchall()
        return [_dataset_from(row) for row in rows]

    def delete_dataset(self, dataset_id: uuid.UUID) -> None:
        with self.transaction() as conn:
            users = [
                row[0]
                for row in conn.execute(
                    "SELECT name FROM experiments WHERE dataset_id = ? ORDER BY created_at",
                    (str(dataset_id),),
                )
            ]
            if users:
                raise StoreError(
                    f"dataset {dataset_id} is what experiments {', '.join(map(repr, users))} ran "
                    "on; deleting it would strip their examples. Delete those experiments first."
                )
            held = attachments.blobs_of_dataset(conn, str(dataset_id))
            deleted = conn.execute("DELETE FROM datasets WHERE id = ?", (str(dataset_id),)).rowcount
            attachments.collect_garbage(conn, held)  # its links went with its examples
        if not deleted:
            raise NotFoundError(f"no dataset with id {dataset_id}")

    def _bump_version(self, conn: sqlite3.Connection, dataset_id: str) -> int:
        row = conn.execute(
            "UPDATE datasets SET version = version + 1 WHERE id = ? RETURNING version", (dataset_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"no dataset with id {dataset_id}")
        return int(row[0])

    def add_examples(self, dataset_id: uuid.UUID, examples: Iterable[Example]) -> int:
        """Streams: ``examples`` may be a generator; a page of them is held at a time."""
        rows = (
            (str(ex.id), ex.inputs, ex.outputs, ex.metadata, codec.ts(ex.created_at), ex.attachments)
            for ex in examples
        )
        with self.transaction() as conn:
            version = self._bump_version(conn, str(dataset_id))
            example_rows.insert(
                conn,
                str(dataset_id),
                version,
                rows,
                on_page=lambda page: self._link_new(conn, str(dataset_id), version, page),
            )
        return version

    def add_example_values(
        self,
        dataset_id: uuid.UUID,
        values: Iterable[ExampleValues],
        *,
        keep: bool = False,
        new: bool = False,
    ) -> tuple[int, Callable[[], Iterator[Example]] | None]:
        created = codec.ts(utcnow())  # one transaction: one instant
        assert created is not None
        if new and keep and self._warm is not None and not self._damage:
            values = iter(values)
            first = list(itertools.islice(values, example_rows.KEEP_LIMIT + 1))
            if len(first) <= example_rows.KEEP_LIMIT:
                return 1, self._example_reader(
                    dataset_id, self._add_first_examples(dataset_id, first, created)
                )
            values = itertools.chain(first, values)  # too many to keep: stored here, as any
        with self.transaction() as conn:
            version = self._bump_version(conn, str(dataset_id))
            kept = example_rows.insert_values(conn, str(dataset_id), version, values, created, keep=keep)
        return version, self._example_reader(dataset_id, kept)

    @staticmethod
    def _example_reader(
        dataset_id: uuid.UUID, kept: list[example_rows.StoredFields] | None
    ) -> Callable[[], Iterator[Example]] | None:
        if kept is None:
            return None
        return lambda: codec.examples_of_fields(kept, dataset_id)

    def _add_first_examples(
        self, dataset_id: uuid.UUID, values: list[ExampleValues], created: str
    ) -> list[example_rows.StoredFields]:
        """The first examples of a dataset just created empty, as version 1: held for the
        writer process started for the coming run (``warm_writer``), to commit while the
        run starts its rows (``release_held_examples``); committed here when none waits."""
        log = StatementLog()
        log.guard(example_rows.FIRST_VERSION, (str(dataset_id),))
        kept = example_rows.insert_values(log, str(dataset_id), 1, values, created, keep=True, start=0)  # type: ignore[arg-type]
        assert kept is not None
        if self._warm is None or not self._warm.waiting():
            self._commit_first_examples(log.statements)
            return kept
        with self._held_lock:  # two runs of this store may hold theirs at once: both kept
            self._held = [*self._held, log.statements]
        return kept

    def release_held_examples(self) -> None:
        """Hand the examples held (``_add_first_examples``) to the waiting writer process,
        which commits them before anything the run writes through it
        (``WriterProcess.hand``); committed here if it is gone."""
        if not self._held:  # nothing held (and never, in a PostgreSQL store)
            return
        with self._held_lock:
            waiting, self._held = self._held, []
        for index, held in enumerate(waiting):
            try:
                if self._warm is None or not self._warm.hand(held, self._commit_first_examples):
                    self._commit_first_examples(held)
            except BaseException:  # an interrupt, a failed commit: held again, not lost
                with self._held_lock:  # (a replay of what did reach the process adds nothing)
                    self._held = [*waiting[index:], *self._held]
                raise

    def _commit_first_examples(self, statements: list[tuple[str, Any, bool | str]]) -> None:
        """Commit in this process a dataset's first examples (``_add_first_examples``),
        unless they are already there."""
        with self.transaction() as conn:
            if example_rows.commit_statements(conn, statements):
                return
        dataset_id, first_id = statements[0][1][0], statements[1][1][0]
        if (
            self.conn.execute(
                "SELECT 1 FROM examples WHERE dataset_id = ? AND id = ? AND added_version = 1",
                (dataset_id, first_id),
            ).fetchone()
            is None
        ):
            raise DataError(
                f"dataset {dataset_id} in {self.path} was changed while its first examples were being "
                "stored, and they were not: delete the dataset and run again"
            )

    def _link_new(self, conn: Any, dataset: str, version: int, page: list[example_rows.ExampleRow]) -> None:
        """The files of the examples just added (those that have any)."""
        given = {row[0]: row[5] for row in page if row[5]}
        if not given:
            return
        marks = _marks(len(given))
        pks = conn.execute(
            f"SELECT id, pk FROM examples WHERE dataset_id = ? AND added_version = ? AND id IN ({marks})",
            (dataset, version, *given),
        ).fetchall()
        for example_id, pk in pks:
            attachments.link(conn, dataset, pk, example_id, given[example_id])

    def _current_example(self, conn: sqlite3.Connection, example_id: uuid.UUID) -> sqlite3.Row:
        row: sqlite3.Row | None = conn.execute(_CURRENT_EXAMPLE_BY_ID, (str(example_id),)).fetchone()
        if row is None:
            raise NotFoundError(f"no example with id {example_id}")
        return row

    def update_example(self, example: Example) -> int:
        with self.transaction() as conn:
            old = self._current_example(conn, example.id)
            version = self._bump_version(conn, old["dataset_id"])
            conn.execute("UPDATE examples SET removed_version = ? WHERE pk = ?", (version, old["pk"]))
            new = conn.execute(
                "INSERT INTO examples (id, dataset_id, position, inputs, outputs, metadata, "
                "created_at, added_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk",
                (
                    str(example.id),
                    old["dataset_id"],
                    old["position"],
                    dumps(example.inputs),
                    dumps(example.outputs),
                    dumps(example.metadata),
                    old["created_at"],
                    version,
                ),
            ).fetchone()
            if example.attachments is None:  # no change asked for: the files stay
                attachments.copy_links(conn, old["pk"], new[0])
            else:
                attachments.link(conn, old["dataset_id"], new[0], str(example.id), example.attachments)
        return version

    def get_example(self, example_id: uuid.UUID) -> Example | None:
        row = self.conn.execute(_CURRENT_EXAMPLE_BY_ID, (str(example_id),)).fetchone()
        return self._with_files([codec.example_from(row)], [row["pk"]])[0] if row else None

    def read_attachment(self, sha256: str) -> bytes:
        return attachments.blob(self.conn, sha256)

    def _with_files(self, examples: list[Example], pks: list[int]) -> list[Example]:
        """``examples`` (the versions ``pks``) with their stored files."""
        found = attachments.attachments_by_pk(self.conn, pks, self.read_attachment)
        for example, pk in zip(examples, pks, strict=True):
            if pk in found:
                example.attachments = found[pk]
        return examples

    def delete_example(self, example_id: uuid.UUID) -> int:
        with self.transaction() as conn:
            old = self._current_example(conn, example_id)
            version = self._bump_version(conn, old["dataset_id"])
            conn.execute("UPDATE examples SET removed_version = ? WHERE pk = ?", (version, old["pk"]))
        return version

    def iter_examples(
        self, dataset_id: uuid.UUID, *, version: int | None = None, page_size: int = 1000
    ) -> Iterator[Example]:
        # Each page on the reading thread's own connection: a feed may be read from any thread.
        # The first pages are small (an experiment's first row waits for the first page),
        # then each doubles up to page_size.
        last, size = -1, min(page_size, 32)
        with_files = attachments.has_any(self.conn, str(dataset_id))
        while page := self.examples_page(dataset_id, version, last, size):
            first, last, size = page[0][-1], page[-1][-1], min(page_size, 2 * size)  # last field: position
            if not with_files:
                yield from codec.examples_of_fields(page, dataset_id)
                continue
            files = attachments.attachments_of_positions(
                self.conn, str(dataset_id), rows.examples_alive(version), first, last, self.read_attachment
            )
            for fields in page:
                example = codec.example_of_fields(fields, dataset_id)
                example.attachments = files.get(str(example.id))
                yield example

    def examples_page(self, dataset_id: uuid.UUID, version: int | None, after: int, size: int) -> list[Any]:
        """One page of ``iter_examples``: the examples' fields after position ``after``."""
        page: list[Any] = rows.examples_page(self.conn, dataset_id, version, after, size)
        return page

    def count_examples(self, dataset_id: uuid.UUID, *, version: int | None = None) -> int:
        query, params = _examples_at(str(dataset_id), version)
        row = self.conn.execute(query.replace("SELECT *", "SELECT COUNT(*)", 1), params).fetchone()
        return int(row[0])

    def list_examples(
        self,
        dataset_id: uuid.UUID,
        *,
        version: int | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> list[Example]:
        query, params = _examples_at(str(dataset_id), version)
        query += " ORDER BY position LIMIT ? OFFSET ?"
        found = self.conn.execute(query, (*params, -1 if limit is None else limit, offset)).fetchall()
        examples = [codec.example_from(row) for row in found]
        if not found or not attachments.has_any(self.conn, str(dataset_id)):
            return examples
        return self._with_files(examples, [row["pk"] for row in found])

    # experiments
    def create_experiment(self, record: ExperimentRecord, lease: LeaseClaim | None = None) -> None:
        try:
            with self.transaction() as conn:
                conn.execute(
                    "INSERT INTO experiments (id, name, dataset_id, dataset_version, description, "
                    "metadata, config, fingerprint, status, num_examples, num_repetitions, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        str(record.id),
                        record.name,
                        _str(record.dataset_id),
                        record.dataset_version,
                        record.description,
                        dumps(record.metadata),
                        dumps(record.config),
                        record.fingerprint,
                        record.status,
                        record.num_examples,
                        record.num_repetitions,
                        codec.ts(record.created_at),
                    ),
                )
                if lease is not None:
                    self._claim_new(conn, record.id, lease)
        except sqlite3.IntegrityError:
            raise AlreadyExistsError(f"an experiment named {record.name!r} already exists") from None

    def get_experiment(
        self, *, name: str | None = None, id: uuid.UUID | None = None
    ) -> ExperimentRecord | None:
        column, value = ("id", str(id)) if id is not None else ("name", name)
        row = self.conn.execute(f"SELECT * FROM experiments WHERE {column} = ?", (value,)).fetchone()
        return _experiment_from(row) if row else None

    def list_experiments(self) -> list[ExperimentRecord]:
        rows = self.conn.execute("SELECT * FROM experiments ORDER BY created_at").fetchall()
        return [_experiment_from(row) for row in rows]

    def finish_experiment(self, experiment_id: uuid.UUID, status: str, fence: Fence | None = None) -> None:
        with self.transaction() as conn:
            fences.hold(conn, fence)
            conn.execute(
                "UPDATE experiments SET status = ?, finished_at = ? WHERE id = ?",
                (status, codec.ts(utcnow()), str(experiment_id)),
            )
        if status == "completed":
            self._columns_once(experiment_id)

    def finish_shard(
        self, experiment_id: uuid.UUID, shard: int, token: str, *, completes: bool = False
    ) -> tuple[int, int] | None:
        outcome = super().finish_shard(experiment_id, shard, token, completes=completes)
        if completes and outcome is not None and outcome[0] >= outcome[1]:
            self._columns_once(experiment_id)
        return outcome

    def _columns_once(self, experiment_id: uuid.UUID) -> None:
        """A completed experiment's rows are final: the comparison's columns, once (unless
        the run's writer process is building them, or has built them, already)."""
        if not columns.has_set(self.conn, str(experiment_id)):
            columns.refresh(self, str(experiment_id))

    def reopen_experiment(self, experiment_id: uuid.UUID) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE experiments SET status = 'running', finished_at = NULL WHERE id = ?",
                (str(experiment_id),),
            )
            columns.invalidate(conn, [str(experiment_id)])
            text_index.invalidate(conn, [str(experiment_id)])

    # rows
    def prepare_row(self, experiment_id: uuid.UUID, row: ExperimentRow) -> Any:
        return codec.prepare(_id_text(experiment_id), codec.id_text(row.run.id), row)

    def write_prepared(self, prepared: Sequence[Any]) -> None:
        encoded = [codec.encoded(item) for item in prepared]
        self._settle_handed()
        with self.transaction() as conn:
            rows.insert_encoded(conn, encoded)
            touched = {run[1] for run, _ in encoded}  # a run's second column: its experiment
            columns.invalidate(conn, touched)
            text_index.invalidate(conn, touched)

    def write_batch(
        self,
        experiment_id: uuid.UUID,
        prepared: Sequence[Any],
        stats: ExperimentStats | None,
        fence: Fence | None = None,
    ) -> None:
        self._settle_handed()
        with self.transaction() as conn:
            _write_batch_on(conn, experiment_id, prepared, stats, fence)

    def _settle_handed(self) -> None:
        """Rows are written after the examples held, or handed to a writer process no run
        took (``_add_first_examples``): they are committed first."""
        self.release_held_examples()
        if self._warm is not None:
            self._warm.settle()

    def batch_writer(self, experiment_id: uuid.UUID, fence: Fence | None = None) -> BatchWriter:
        """A file's batches go through a writer process once a run is large enough
        (``sqlite._writer``); a memory database's stay in this process."""
        if self._uri:
            return super().batch_writer(experiment_id, fence)
        self.release_held_examples()  # to the process the run takes, ahead of its rows
        return ProcessBatchWriter(
            self, experiment_id, _write_batch_on, self._pragmas, fence=fence, warm=self._warm
        )

    def warm_writer(self, rows: int) -> None:
        if self._warm is not None and not self._damage:
            self._warm.start(rows)

    def settle_writers_of(self, run_pid: int) -> None:
        if not self._uri:
            settle_writers_of(self.path, run_pid)

    def has_run(self, run_id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is not None

    def write_stats(
        self, experiment_id: uuid.UUID, stats: ExperimentStats, fence: Fence | None = None
    ) -> None:
        with self.transaction() as conn:
            fences.hold(conn, fence)
            rows.write_stats(conn, experiment_id, stats)

    def load_stats(self, experiment_id: uuid.UUID) -> ExperimentStats | None:
        return rows.load_stats(self.conn, experiment_id)

    def discard_failed_runs(self, experiment_id: uuid.UUID, shard: tuple[int, int] | None = None) -> int:
        query = "DELETE FROM runs WHERE experiment_id = ? AND error IS NOT NULL"
        params: list[Any] = [str(experiment_id)]
        if shard is not None:
            query += (
                " AND (position * (SELECT num_repetitions FROM experiments WHERE id = ?) + repetition)"
                " % ? = ?"
            )
            params += [str(experiment_id), shard[1], shard[0]]
        with self.transaction() as conn:
            columns.invalidate(conn, [str(experiment_id)])
            text_index.invalidate(conn, [str(experiment_id)])
            return conn.execute(query, params).rowcount

    def completed_keys(self, experiment_id: uuid.UUID) -> set[tuple[str, int]]:
        rows = self.conn.execute(
            "SELECT example_id, repetition FROM runs WHERE experiment_id = ?", (str(experiment_id),)
        )
        return {(row[0], row[1]) for row in rows}

    def stored_keys(self, experiment_id: uuid.UUID) -> Iterator[tuple[int, int]]:
        yield from self.conn.execute(
            "SELECT position, repetition FROM runs WHERE experiment_id = ?", (str(experiment_id),)
        )

    def count_rows(self, experiment_id: uuid.UUID) -> int:
        row = self.conn.execute(
            "SELECT COUNT(*) FROM runs WHERE experiment_id = ?", (str(experiment_id),)
        ).fetchone()
        return int(row[0])

    def load_rows(
        self,
        experiment: ExperimentRecord,
        *,
        after: tuple[int, int] | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> list[ExperimentRow]:
        if limit is not None:
            return self._rows_with_files(
                experiment, rows.load_rows(self.conn, experiment, after, offset, limit)
            )
        with self.snapshot():  # everything: page by page, all from one state of the file
            loaded: list[ExperimentRow] = []
            page = rows.load_rows(self.conn, experiment, after, offset, _PAGE)
            while page:
                loaded += page
                last = page[-1]
                page = rows.load_rows(self.conn, experiment, (last.position, last.repetition), 0, _PAGE)
            return self._rows_with_files(experiment, loaded)

    def _rows_with_files(
        self, experiment: ExperimentRecord, loaded: list[ExperimentRow]
    ) -> list[ExperimentRow]:
        """Each row's example with the files it had in the version the experiment ran on."""
        dataset = None if experiment.dataset_id is None else str(experiment.dataset_id)
        if not loaded or dataset is None or not attachments.has_any(self.conn, dataset):
            return loaded
        ids = sorted({str(row.example.id) for row in loaded})
        alive = rows.examples_alive(experiment.dataset_version)
        files = attachments.attachments_of_ids(self.conn, dataset, alive, ids, self.read_attachment)
        for row in loaded:
            row.example.attachments = files.get(str(row.example.id), row.example.attachments)
        return loaded

    def load_row_values(
        self,
        experiment: ExperimentRecord,
        field: str,
        *,
        after: tuple[int, int] | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> list[tuple[tuple[int, int], Any]]:
        return rows.load_row_values(self.conn, experiment, field, after, offset, limit)

    def iter_scores(self, experiment_id: uuid.UUID) -> Iterator[tuple[Any, ...]]:
        return rows.iter_scores(self.conn, experiment_id)

    def replace_summary_results(self, experiment_id: uuid.UUID, results: Sequence[EvaluationResult]) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM summary_results WHERE experiment_id = ?", (str(experiment_id),))
            conn.executemany(
                "INSERT INTO summary_results (experiment_id, key, score, value, feedback, comment, "
                "metadata, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        str(experiment_id),
                        codec.text(r.key),
                        codec.score_column(r),
                        dumps(r.value),
                        codec.text(r.feedback),
                        codec.text(r.comment),
                        dumps(r.metadata or None),
                        codec.text(r.error),
                    )
                    for r in results
                ],
            )

    def load_summary_results(self, experiment_id: uuid.UUID) -> list[EvaluationResult]:
        rows = self.conn.execute(
            "SELECT * FROM summary_results WHERE experiment_id = ? ORDER BY pk", (str(experiment_id),)
        )
        return [codec.result_from(row) for row in rows]

    def write_results(
        self,
        experiment_id: uuid.UUID,
        results_by_run: Sequence[tuple[uuid.UUID, Sequence[EvaluationResult]]],
        *,
        replace: bool,
        fence: Fence | None = None,
    ) -> None:
        exp = str(experiment_id)
        with self.transaction() as conn:
            fences.hold(conn, fence)
            columns.invalidate(conn, [exp])
            pairs = _run_pairs(conn, [str(run_id) for run_id, _ in results_by_run])
            rows = [
                codec.result_row(exp, str(run_id), result, pairs.get(str(run_id), ("", 0, 0)))
                for run_id, results in results_by_run
                for result in results
            ]
            if replace:
                conn.executemany(
                    "DELETE FROM results WHERE run_id = ? AND key = ?",
                    {(str(run_id), r.key) for run_id, results in results_by_run for r in results},
                )
            marks = _marks(codec.RESULT_COLUMNS.count(",") + 1)
            conn.executemany(f"INSERT INTO results ({codec.RESULT_COLUMNS}) VALUES ({marks})", rows)

    def update_experiment_config(self, experiment_id: uuid.UUID, config: dict[str, Any]) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE experiments SET config = ? WHERE id = ?", (dumps(config), str(experiment_id))
            )

    def update_experiment(
        self,
        experiment_id: uuid.UUID,
        *,
        name: str | None = None,
        description: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        changes = {"name": name, "description": description}
        if metadata is not None:
            changes["metadata"] = dumps(metadata)
        changes = {column: value for column, value in changes.items() if value is not None}
        if not changes:
            return
        sets = ", ".join(f"{column} = ?" for column in changes)
        with self.transaction() as conn:
            conn.execute(
                f"UPDATE experiments SET {sets} WHERE id = ?", (*changes.values(), str(experiment_id))
            )

    #: what a read that is followed by a write of the same row adds to lock it (SQLite's
    #: write transaction already holds the whole database)
    _LOCK_FOR_WRITE = ""

    def edit_metadata_field(
        self,
        table: Literal["datasets", "experiments"],
        record_id: uuid.UUID,
        name: str,
        edit: Callable[[Any], Any],
    ) -> Any:
        if table not in ("datasets", "experiments"):
            raise ValueError(f"edit_metadata_field edits datasets or experiments, not {table!r}")
        with self.transaction() as conn:
            row = conn.execute(
                f"SELECT metadata FROM {table} WHERE id = ?{self._LOCK_FOR_WRITE}", (str(record_id),)
            ).fetchone()
            if row is None:
                raise NotFoundError(f"no {table[:-1]} with id {record_id}")
            metadata = loads(row[0]) or {}
            value = edit(metadata.pop(name, None))
            if value is not None:
                metadata[name] = value
            conn.execute(f"UPDATE {table} SET metadata = ? WHERE id = ?", (dumps(metadata), str(record_id)))
        return value

    def delete_experiment(self, experiment_id: uuid.UUID) -> None:
        with self.transaction() as conn:  # runs, results and summaries go by ON DELETE CASCADE
            text_index.drop_of(conn, str(experiment_id))
            conn.execute("DELETE FROM experiments WHERE id = ?", (str(experiment_id),))

    # comparisons
    def add_comparisons(self, records: Sequence[ComparisonRecord]) -> None:
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO comparisons (id, name, experiment_ids, example_id, key, scores, comment, "
                "metadata, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        str(r.id),
                        r.name,
                        dumps([str(e) for e in r.experiment_ids]),
                        str(r.example_id),
                        codec.text(r.key),
                        dumps(r.scores),
                        codec.text(r.comment),
                        dumps(r.metadata or None),
                        codec.text(r.error),
                        codec.ts(utcnow()),
                    )
                    for r in records
                ],
            )

    def list_comparisons(self, name: str) -> list[ComparisonRecord]:
        rows = self.conn.execute("SELECT * FROM comparisons WHERE name = ? ORDER BY pk", (name,))
        return [
            ComparisonRecord(
                id=uuid.UUID(row["id"]),
                name=row["name"],
                experiment_ids=[uuid.UUID(e) for e in loads(row["experiment_ids"])],
                example_id=uuid.UUID(row["example_id"]),
                key=row["key"],
                scores=loads(row["scores"]) or {},
                comment=row["comment"],
                metadata=loads(row["metadata"]) or {},
                error=row["error"],
            )
            for row in rows
        ]

    # cache
    def cache_get(self, namespace: str, key: str) -> bytes | None:
        row = self.conn.execute(
            "SELECT value FROM cache WHERE namespace = ? AND key = ?", (namespace, key)
        ).fetchone()
        return bytes(row[0]) if row else None

    def cache_put(self, namespace: str, key: str, value: bytes) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO cache (namespace, key, value, created_at) VALUES (?, ?, ?, ?)",
                (namespace, key, value, codec.ts(utcnow())),
            )


@functools.lru_cache(maxsize=16)
def _id_text(experiment_id: uuid.UUID) -> str:
    """An experiment's id as text, made once rather than for each of its rows."""
    return str(experiment_id)


def _write_batch_on(
    conn: Any,
    experiment_id: uuid.UUID,
    prepared: Sequence[Any],
    stats: ExperimentStats | None,
    fence: Fence | None = None,
) -> None:
    """A batch's statements, on a connection or a writer process's ``StatementLog``
    (which hands the rows over as they are, for the writer process to encode); first,
    while ``fence`` is given, the check that the run still holds its lease."""
    if isinstance(conn, StatementLog):
        if fence is not None:
            conn.guard(fences.FENCE_SQL, fence.params)
        conn.rows(prepared)
    else:
        fences.hold(conn, fence)
        rows.insert_encoded(conn, [codec.encoded(item) for item in prepared])
    touched = [_id_text(experiment_id)]  # a run's batches hold its experiment's rows only
    columns.invalidate(conn, touched)
    text_index.invalidate(conn, touched)
    if stats is not None:
        rows.write_stats(conn, experiment_id, stats)


@contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _statements(script: str) -> Iterator[str]:
    """Split a migration script into statements (``executescript`` would commit early)."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending
            pending = ""
    if pending.strip():
        yield pending


_DATASET_QUERY = (
    "SELECT d.*, (SELECT COUNT(*) FROM examples e WHERE e.dataset_id = d.id "
    "AND e.removed_version IS NULL) AS example_count FROM datasets d"
)


def _examples_at(dataset_id: str, version: int | None) -> tuple[str, tuple[Any, ...]]:
    if version is None:
        return "SELECT * FROM examples WHERE dataset_id = ? AND removed_version IS NULL", (dataset_id,)
    return (
        "SELECT * FROM examples WHERE dataset_id = ? AND added_version <= ? "
        "AND (removed_version IS NULL OR removed_version > ?)",
        (dataset_id, version, version),
    )


def _marks(count: int) -> str:
    return ", ".join("?" * count)


def _str(value: uuid.UUID | None) -> str | None:
    return None if value is None else str(value)


def _dataset_from(row: sqlite3.Row) -> Dataset:
    return Dataset(
        id=uuid.UUID(row["id"]),
        name=row["name"],
        description=row["description"],
        created_at=codec.parse_required_ts(row["created_at"]),
        example_count=row["example_count"],
        version=row["version"],
        metadata=loads(row["metadata"]) or {},
    )


def _experiment_from(row: sqlite3.Row) -> ExperimentRecord:
    return ExperimentRecord(
        id=uuid.UUID(row["id"]),
        name=row["name"],
        dataset_id=codec.uid(row["dataset_id"]),
        dataset_version=row["dataset_version"],
        description=row["description"],
        metadata=loads(row["metadata"]) or {},
        config=loads(row["config"]) or {},
        fingerprint=row["fingerprint"],
        status=row["status"],
        num_examples=row["num_examples"],
        num_repetitions=row["num_repetitions"],
        created_at=codec.parse_required_ts(row["created_at"]),
        finished_at=codec.parse_ts(row["finished_at"]),
    )


def _run_pairs(conn: sqlite3.Connection, run_ids: list[str]) -> dict[str, tuple[str, int, int]]:
    """(example id, repetition, position) of each stored run, copied onto the results
    written for it."""
    pairs: dict[str, tuple[str, int, int]] = {}
    for start in range(0, len(run_ids), 500):
        chunk = run_ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for row in conn.execute(
            f"SELECT id, example_id, repetition, position FROM runs WHERE id IN ({marks})", chunk
        ):
            pairs[row[0]] = (row[1], row[2], row[3])
    return pairs
