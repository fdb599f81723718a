"""The shared store: one PostgreSQL database, one connection per thread, many processes.

It runs the SQLite store's own queries through ``postgres_conn`` (which speaks the
SQLite dialect to PostgreSQL), so both backends answer every ``Store`` call the same
way and a query added to one is in the other. What differs lives here: connections and
transactions, schema migrations under an advisory lock, unique-name violations, and the
feedback score (kept as JSON text: an untyped SQLite column keeps 1 and 1.0 apart).

Writers of different experiments never wait for each other (rows are keyed by
experiment); writers of one dataset take turns on its row, as SQLite's writers do.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import threading
import uuid
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from assay.errors import AlreadyExistsError, StoreVersionError, require_extra
from assay.schemas import Dataset, Example
from assay.store._codec import run_id_of
from assay.store._json import dumps, loads
from assay.store._masking import masked
from assay.store._schema import MIGRATIONS, POSTGRES_ROW_REFERENCES, SCHEMA_VERSION
from assay.store.base import BatchWriter, ExampleValues
from assay.store.fence import Fence
from assay.store.postgres._batch import write_batch as pipelined_write_batch
from assay.store.postgres._conn import PGConnection, connect
from assay.store.postgres._dialect import COMPAT_SQL, ddl
from assay.store.postgres._integrity import ROW_REFERENCES_SQL
from assay.store.postgres._reconnect import RETRIED, _Unreachable, is_lost, reconnect_seconds, with_reconnect
from assay.store.postgres._statistics import ANALYZE_SQL, WrittenRows
from assay.store.postgres._takeover import BOUND_LOCK_WAIT_SQL, take_past_paused_holder
from assay.store.postgres._writer import PostgresBatchWriter, settle_postgres_writers_of
from assay.store.records import ExperimentRecord, ExperimentRow, ExperimentStats, Lease, LeaseClaim
from assay.store.sqlite import SQLiteStore, _write_batch_on

__all__ = ["PostgresStore", "masked", "postgres_migrations"]

# Any constant: the key of the advisory lock that serialises schema migrations.
_MIGRATION_LOCK = 0x61737361795F7067
# psycopg logs "error ignored terminating <psycopg.Pipeline [BAD]>" when a connection is
# lost mid-batch: the lost connection is reported (or ridden out) by the store instead
logging.getLogger("psycopg").addHandler(logging.NullHandler())

# Statements of the SQLite migrations that need another form in PostgreSQL.
_REWRITES = {
    "UPDATE runs SET failed = (error IS NOT NULL OR EXISTS (SELECT 1 FROM results r\n"
    "        WHERE r.run_id = runs.id AND (r.error IS NOT NULL OR r.score < 1)));": (
        "UPDATE runs SET failed = CASE WHEN error IS NOT NULL OR EXISTS (SELECT 1 FROM results r "
        "WHERE r.run_id = runs.id AND (r.error IS NOT NULL OR r.score < 1)) THEN 1 ELSE 0 END;"
    ),
    "        score,\n": "        score TEXT,\n",
}


def postgres_migrations() -> list[str]:
    """The SQLite migrations in PostgreSQL's types, one for one (so versions agree)."""
    scripts = []
    for index, script in enumerate(MIGRATIONS):
        if script == POSTGRES_ROW_REFERENCES:
            scripts.append(ROW_REFERENCES_SQL)
            continue
        for old, new in _REWRITES.items():
            script = script.replace(old, new)
        scripts.append((COMPAT_SQL if index == 0 else "") + ddl(script))
    return scripts


class PostgresStore(SQLiteStore):
    """``Store`` on PostgreSQL (``postgresql://user:password@host:port/database``)."""

    _LOCK_FOR_WRITE = " FOR UPDATE"  # READ COMMITTED: a read-modify-write locks its row
    _LOCK_AGAINST_DELETE = " FOR KEY SHARE"  # a row others refer to: no delete until commit

    def __init__(self, url: str) -> None:
        require_extra("psycopg", "postgres", feature="the PostgreSQL store")
        scheme, _, rest = url.partition("://")
        self._dsn = f"postgresql://{rest}"  # libpq takes no "+psycopg"
        self.url = masked(url)
        self.path = self.url  # what SQLite-store messages name
        self._local = threading.local()
        self._memory_writer = None
        self._opened: list[PGConnection] = []
        self._opened_lock = threading.Lock()
        # A store dropped without close(), or read again after it (results read page by
        # page), still closes its connections when collected.
        weakref.finalize(self, _close_all, self._opened, self._opened_lock)
        self._reconnect_s = reconnect_seconds()
        self._written = WrittenRows()  # for the planner's statistics (``_statistics``)
        self._columns_due: dict[str, Callable[[], None]] = {}  # ``build_columns_when_finished``
        self._keepalive = self._open_and_migrate()  # type: ignore[assignment]

    @property
    def dsn(self) -> str:
        """The libpq URL the store connects with (its password included)."""
        return self._dsn

    def batch_writer(self, experiment_id: uuid.UUID, fence: Fence | None = None) -> BatchWriter:
        """Through a writer process once a run is large enough, as SQLite's (``_writer``);
        the columns are built as the run ends, without it waiting."""
        return PostgresBatchWriter(self, experiment_id, _write_batch_on, fence=fence)

    def finish_experiment(self, experiment_id: uuid.UUID, status: str, fence: Fence | None = None) -> None:
        """As SQLite's, with the cyclic garbage collector held off while the experiment's
        columns are built here (SQLite's writer process builds them in its own small
        heap): that reads a tuple per result, and in a run's process, which holds the
        run's rows, their allocation set off full collections of its heap (0.2 of the
        0.25 s a 10,000-row build took). The tuples are freed as they are read."""
        with _collector_paused():
            self._again(lambda: SQLiteStore.finish_experiment(self, experiment_id, status, fence))
        self._start_columns_due(experiment_id)

    def build_columns_when_finished(self, experiment_id: uuid.UUID, start: Callable[[], None]) -> None:
        """``start()`` the build of the experiment's metric columns (marked pending) once
        this store finishes the experiment (``finish_experiment``, or ``finish_shard``
        completing it): not while the run's summary evaluators read its rows back. A run
        that never finishes it leaves the mark: the first comparison builds them."""
        self._columns_due[str(experiment_id)] = start

    def _start_columns_due(self, experiment_id: uuid.UUID) -> None:
        start = self._columns_due.pop(str(experiment_id), None)
        if start is not None:
            start()

    def take_lease(self, experiment_id: uuid.UUID, shard: int, shards: int, **holder: Any) -> Lease:
        """As SQLite's, but never stuck behind a holder paused inside a write whose lease
        has expired (``_takeover``)."""
        return take_past_paused_holder(
            self._again,
            self,
            experiment_id,
            shard,
            lambda: SQLiteStore.take_lease(self, experiment_id, shard, shards, **holder),
        )

    def _bound_lock_wait(self, conn: Any) -> None:
        conn.execute(BOUND_LOCK_WAIT_SQL)

    def finish_shard(
        self, experiment_id: uuid.UUID, shard: int, token: str, *, completes: bool = False
    ) -> tuple[int, int] | None:
        """As SQLite's; one that completes the experiment may build its columns: as above."""
        with _collector_paused():
            outcome: tuple[int, int] | None = self._again(
                lambda: SQLiteStore.finish_shard(self, experiment_id, shard, token, completes=completes)
            )
        if completes and outcome is not None and outcome[0] >= outcome[1]:
            self._start_columns_due(experiment_id)
        return outcome

    def rows_written(self, experiment_id: uuid.UUID, rows: int) -> None:
        """A run's batch of ``rows`` rows is stored (``_writer``)."""
        self._written.add(str(experiment_id), rows)

    def before_reading_rows(self, experiment_id: uuid.UUID) -> None:
        """The planner's statistics refreshed if this store wrote many of the experiment's
        rows since it last did (``_statistics``)."""
        self._written.before_reading(str(experiment_id), self._analyze_rows)

    def _analyze_rows(self) -> None:
        def analyze() -> None:
            with self.transaction() as conn:
                for statement in ANALYZE_SQL:
                    conn.execute(statement)

        self._again(analyze)

    def load_rows(
        self,
        experiment: ExperimentRecord,
        *,
        after: tuple[int, int] | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> list[ExperimentRow]:
        self.before_reading_rows(experiment.id)
        return self._again(  # type: ignore[no-any-return]
            lambda: SQLiteStore.load_rows(self, experiment, after=after, offset=offset, limit=limit)
        )

    def load_row_values(
        self,
        experiment: ExperimentRecord,
        field: str,
        *,
        after: tuple[int, int] | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> list[tuple[tuple[int, int], Any]]:
        self.before_reading_rows(experiment.id)
        return self._again(  # type: ignore[no-any-return]
            lambda: SQLiteStore.load_row_values(
                self, experiment, field, after=after, offset=offset, limit=limit
            )
        )

    def settle_writers_of(self, run_pid: int) -> None:
        settle_postgres_writers_of(self.url, run_pid)

    def require_whole(self, *, thorough: bool = False) -> None:
        return None  # the server checks its own pages (data checksums, amcheck)

    def again(self, call: Callable[[], Any]) -> Any:
        """``call()``, run again on a new connection while this thread's was lost."""
        return self._again(call)

    # a lost connection: reconnect and run the call again (``_reconnect``)
    def _again(self, call: Callable[[], Any], landed: Callable[[], bool] | None = None) -> Any:
        return with_reconnect(
            call,
            lambda exc: is_lost(exc, getattr(self._local, "conn", None)),
            self._drop_connection,
            seconds=self._reconnect_s,
            where=self.url,
            landed=landed,
        )

    def drop_connection(self) -> None:
        """Close this thread's connection (a thread that is done with the store)."""
        self._drop_connection()

    def _drop_connection(self) -> None:
        conn: PGConnection | None = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            with self._opened_lock:
                if conn in self._opened:
                    self._opened.remove(conn)
            with contextlib.suppress(Exception):
                conn.close()

    def write_batch(
        self,
        experiment_id: uuid.UUID,
        prepared: Sequence[Any],
        stats: ExperimentStats | None,
        fence: Fence | None = None,
        *,
        mark_columns: bool = False,
    ) -> None:
        """In six round trips (``_batch``). Run again on a lost connection, unless the
        batch's first row is there: its commit landed before the connection went.
        ``mark_columns``: a finished run's last batch, which marks the build of the
        experiment's metric columns pending in the same transaction."""
        first = run_id_of(prepared[0]) if prepared else None
        self._again(
            lambda: pipelined_write_batch(self.conn, experiment_id, prepared, stats, fence, mark_columns),
            landed=(lambda: SQLiteStore.has_run(self, first)) if first is not None else None,
        )

    # connections
    def _connect(self) -> PGConnection:  # type: ignore[override]
        import psycopg

        try:
            conn = connect(self._dsn)
        except psycopg.OperationalError as exc:
            raise _Unreachable(f"cannot open the store at {self.url}: {_first_line(exc)}") from None
        with self._opened_lock:
            self._opened.append(conn)
        return conn

    def _open_and_migrate(self) -> PGConnection:  # type: ignore[override]
        conn = self._connect()
        try:
            self._migrate(conn)
        except BaseException:
            conn.close()
            raise
        self._local.conn = conn
        return conn

    @property
    def conn(self) -> PGConnection:  # type: ignore[override]
        conn: PGConnection | None = getattr(self._local, "conn", None)
        if conn is None or conn.raw.closed:
            conn = self._local.conn = self._connect()
        return conn

    @contextmanager
    def transaction(self) -> Iterator[PGConnection]:  # type: ignore[override]
        conn = self.conn
        with conn.raw.transaction():
            yield conn

    @contextmanager
    def snapshot(self) -> Iterator[PGConnection]:  # type: ignore[override]
        conn = self.conn
        with conn.raw.transaction():
            conn.raw.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            yield conn

    def _migrate(self, conn: Any) -> None:
        if self._schema_version(conn) == SCHEMA_VERSION:
            return
        scripts = postgres_migrations()
        with conn.raw.transaction():  # version and DDL commit together
            conn.raw.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            version = self._schema_version(conn)
            if version > SCHEMA_VERSION:
                raise StoreVersionError(
                    f"the store at {self.url} has schema version {version}, newer than this "
                    f"assay understands ({SCHEMA_VERSION}); upgrade assay to open it"
                )
            for index in range(version, SCHEMA_VERSION):
                for statement in _pg_statements(scripts[index]):
                    conn.raw.execute(statement)
                conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                    (str(index + 1),),
                )

    @staticmethod
    def _schema_version(conn: Any) -> int:
        # A scan of the catalogue, not to_regclass: its cache can miss a table another
        # process created while this one waited for the migration lock.
        has_meta = conn.execute(
            "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = 'meta'"
        ).fetchone()
        if not has_meta:
            return 0
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        _close_all(self._opened, self._opened_lock)
        self._local = threading.local()

    # names are unique: say which one is taken
    def create_dataset(
        self, name: str, description: str | None = None, metadata: dict[str, Any] | None = None
    ) -> Dataset:
        import psycopg

        try:
            return super().create_dataset(name, description, metadata)
        except psycopg.errors.UniqueViolation:
            raise AlreadyExistsError(f"a dataset named {name!r} already exists") from None

    # a large append refreshes the planner's statistics of the examples (and datasets) at
    # once: autovacuum would within a minute, and until then a lookup by id, planned for
    # the small table it saw, scans every example (a loop of update_example: quadratic)
    def add_examples(self, dataset_id: uuid.UUID, examples: Iterable[Example]) -> int:
        counted = _Counted(examples)
        version = super().add_examples(dataset_id, counted)
        self._analyze_examples_after(counted.count)
        return version

    def add_example_values(
        self,
        dataset_id: uuid.UUID,
        values: Iterable[ExampleValues],
        *,
        keep: bool = False,
        new: bool = False,
    ) -> tuple[int, Callable[[], Iterator[Example]] | None]:
        counted = _Counted(values)  # stored now whether ``new`` or not
        added = super().add_example_values(dataset_id, counted, keep=keep)
        self._analyze_examples_after(counted.count)
        return added

    def _analyze_examples_after(self, appended: int) -> None:
        if appended >= _ANALYZE_AFTER_EXAMPLES:
            with self.transaction() as conn:  # statistics are transactional: committed
                conn.execute("ANALYZE datasets, examples")

    def create_experiment(self, record: ExperimentRecord, lease: LeaseClaim | None = None) -> None:
        import psycopg

        try:
            super().create_experiment(record, lease)
        except psycopg.errors.UniqueViolation:
            raise AlreadyExistsError(f"an experiment named {record.name!r} already exists") from None

    # feedback: the score as JSON text, so an int stays an int and a float a float
    def _stored_feedback_score(self, score: Any) -> Any:
        return dumps(int(score) if isinstance(score, bool) else score)

    def _select(
        self,
        table: str,
        columns: str,
        run_ids: Sequence[uuid.UUID] | None,
        keys: Sequence[str] | None,
        ids: Sequence[uuid.UUID] | None = None,
    ) -> list[Any]:
        rows: list[Any] = super()._select(table, columns, run_ids, keys, ids)
        if table != "feedback" or not rows:
            return rows
        at = rows[0].keys().index("score")
        return [type(row)((*row[:at], loads(row[at]), *row[at + 1 :])) for row in rows]


#: examples appended at once after which their statistics are refreshed (ANALYZE samples
#: ~30,000 rows whatever the table's size: ~0.1-0.3 s)
_ANALYZE_AFTER_EXAMPLES = 5_000

_T = TypeVar("_T")


class _Counted(Generic[_T]):
    """An iterable passed through, counting what was taken from it."""

    def __init__(self, items: Iterable[_T]) -> None:
        self._items, self.count = items, 0

    def __iter__(self) -> Iterator[_T]:
        for item in self._items:
            self.count += 1
            yield item


def _retried(name: str) -> Any:
    method = getattr(SQLiteStore, name)

    @functools.wraps(method)
    def call(self: PostgresStore, *args: Any, **kwargs: Any) -> Any:
        return self._again(lambda: method(self, *args, **kwargs))

    return call


for _name in RETRIED:  # each safe to run twice (see _reconnect)
    if _name not in PostgresStore.__dict__:
        setattr(PostgresStore, _name, _retried(_name))


@contextmanager
def _collector_paused() -> Iterator[None]:
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _close_all(opened: list[PGConnection], lock: threading.Lock) -> None:
    with lock:
        connections = list(opened)
        opened.clear()
    for conn in connections:
        conn.close()


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _pg_statements(script: str) -> Iterator[str]:
    """A migration script's statements: split at ``;`` outside function bodies (``$$``),
    comment lines dropped first (they may hold a ``;``)."""
    script = "\n".join(line for line in script.splitlines() if not line.strip().startswith("--"))
    statement, inside = "", False
    for part in script.split("$$"):
        if inside:
            statement += "$$" + part + "$$"
        else:
            pieces = part.split(";")
            statement += pieces[0]
            for piece in pieces[1:]:
                if statement.strip():
                    yield statement
                statement = piece
        inside = not inside
    if statement.strip():
        yield statement
