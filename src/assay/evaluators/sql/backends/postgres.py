"""PostgreSQL through SQLAlchemy's pool and psycopg 3, read-only by construction.

Each query runs in its own ``BEGIN READ ONLY`` transaction with a
``statement_timeout`` and is always rolled back; sessions also default to read-only
transactions. Queries are sent with the extended protocol (``Cursor.stream``),
which the server refuses to run as more than one statement, so ``SELECT 1; COMMIT;
DROP ...`` cannot escape the transaction whatever a parser thinks of it. Rows
are streamed and the stream is cancelled past the row cap.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from itertools import islice
from typing import Any, cast

from assay.errors import require_extra
from assay.evaluators.sql.backends.base import (
    Database,
    DatabaseUnavailable,
    ExecutionLimits,
    QueryError,
    QueryRefused,
    QueryResult,
    QueryTimeout,
)
from assay.schemas import Example

try:
    import psycopg
    import sqlalchemy as sa
    from psycopg import errors as pg_errors
    from psycopg.pq import TransactionStatus
except ImportError:  # exercised by tests/test_errors.py with psycopg hidden
    for _module in ("psycopg", "sqlalchemy"):
        require_extra(_module, "postgres", feature="PostgreSQL databases")
    raise

__all__ = ["PostgresDatabase", "PostgresSession"]


_DRIVER = "postgresql+psycopg"
_STREAM_CHUNK = 500


class PostgresDatabase(Database):
    """A PostgreSQL database given by URL; connections are pooled per evaluator."""

    dialect = "postgres"

    def __init__(self, url: str, limits: ExecutionLimits) -> None:
        self.url = _psycopg_url(url)
        self.limits = limits
        self.description = self.url.render_as_string(hide_password=True)
        self._engine: sa.Engine | None = None
        self._lock = threading.Lock()

    def _get_engine(self) -> sa.Engine:
        with self._lock:
            if self._engine is None:
                connect_args: dict[str, Any] = {}
                if "connect_timeout" not in self.url.query:
                    connect_args["connect_timeout"] = max(2, math.ceil(self.limits.timeout))
                engine = sa.create_engine(self.url, pool_pre_ping=True, connect_args=connect_args)
                sa.event.listen(engine, "connect", _default_read_only)
                self._engine = engine
            return self._engine

    @contextmanager
    def session(self, example: Example | None) -> Iterator[PostgresSession]:
        try:
            pooled = self._get_engine().raw_connection()
        except (sa.exc.DBAPIError, psycopg.Error) as exc:
            reason = exc.orig if isinstance(exc, sa.exc.DBAPIError) else exc
            raise DatabaseUnavailable(f"cannot connect to {self.description}: {reason}") from None
        connection = pooled.driver_connection
        assert isinstance(connection, psycopg.Connection)
        try:
            yield PostgresSession(connection, self.limits)
        finally:
            if connection.broken or connection.closed:
                pooled.invalidate()  # never hand a connection in an unknown state to the pool
            pooled.close()

    def close(self) -> None:
        with self._lock:
            if self._engine is not None:
                self._engine.dispose()
                self._engine = None


def _psycopg_url(url: str) -> sa.URL:
    parsed = sa.make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        return parsed.set(drivername=_DRIVER)
    if parsed.drivername != _DRIVER:
        raise ValueError(
            f"PostgreSQL is reached through psycopg 3: use postgresql:// or {_DRIVER}://, "
            f"not {parsed.drivername}://"
        )
    return parsed


def _default_read_only(dbapi_connection: Any, _record: Any) -> None:
    """Every pooled connection's transactions default to read-only."""
    dbapi_connection.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    dbapi_connection.commit()


class PostgresSession:
    """Runs queries on one pooled connection, each in a rolled-back READ ONLY transaction."""

    def __init__(self, connection: psycopg.Connection[Any], limits: ExecutionLimits) -> None:
        self.connection = connection
        self.limits = limits

    def run(self, sql: str) -> QueryResult:
        connection = self.connection
        if connection.closed or connection.broken:
            raise DatabaseUnavailable("the PostgreSQL connection was closed after a failed query")
        if connection.info.transaction_status != TransactionStatus.IDLE:
            connection.rollback()
        connection.read_only = True  # the next BEGIN is BEGIN READ ONLY
        cursor = connection.cursor()
        try:
            timeout_ms = max(1, round(self.limits.timeout * 1000))
            cursor.execute(f"SET LOCAL statement_timeout = {timeout_ms}")
            started = time.perf_counter()
            rows = self._fetch(cursor, sql)
            elapsed_ms = (time.perf_counter() - started) * 1000
            columns = self._columns(cursor, sql)
        except psycopg.Error as exc:
            raise self._explain(exc) from None
        finally:
            self._end_transaction(cursor)
        return QueryResult(
            columns=columns,
            rows=rows[: self.limits.max_rows],
            elapsed_ms=elapsed_ms,
            truncated=len(rows) > self.limits.max_rows,
        )

    def _end_transaction(self, cursor: psycopg.Cursor[Any]) -> None:
        """Roll back; a connection that cannot (say, stuck in COPY) is closed, not reused."""
        try:
            cursor.close()
            if not self.connection.broken:
                self.connection.rollback()
        except psycopg.Error:
            self.connection.close()

    def _fetch(self, cursor: psycopg.Cursor[Any], sql: str) -> list[tuple[Any, ...]]:
        chunk = _STREAM_CHUNK if psycopg.capabilities.has_stream_chunked() else 1
        stream = cast(Generator[Any, None, None], cursor.stream(sql, size=chunk))
        try:
            return [tuple(row) for row in islice(stream, self.limits.max_rows + 1)]
        finally:
            stream.close()  # past the cap: cancels the rest of the query

    def _columns(self, cursor: psycopg.Cursor[Any], sql: str) -> tuple[str, ...]:
        if cursor.description is not None:
            return tuple(column.name for column in cursor.description)
        # A stream with no rows leaves no description: ask the server to describe the statement.
        encoding = self.connection.info.encoding
        pgconn = self.connection.pgconn
        pgconn.prepare(b"", sql.encode(encoding))
        described = pgconn.describe_prepared(b"")
        return tuple((described.fname(index) or b"").decode(encoding) for index in range(described.nfields))

    def _explain(self, exc: psycopg.Error) -> Exception:
        message = str(exc).strip()
        if self.connection.broken or self.connection.closed:
            return DatabaseUnavailable(f"lost the PostgreSQL connection: {message}")
        if isinstance(exc, pg_errors.QueryCanceled):
            return QueryTimeout(f"query exceeded the {self.limits.timeout:g} s timeout and was cancelled")
        if isinstance(exc, (pg_errors.ReadOnlySqlTransaction, pg_errors.InsufficientPrivilege)):
            return QueryRefused(f"the read-only guard refused the query: {message}")
        if "multiple commands" in message:
            return QueryRefused("several statements: only a single query may run")
        return QueryError(message)
