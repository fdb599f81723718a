"""PostgreSQL through SQLAlchemy's pool and psycopg 3, read-only by construction.

The role in the URL is checked once, at the first connection, to hold no
privilege beyond reading (``_pg_role``). Every connection starts with
read-only transactions, a statement, lock and idle-in-transaction timeout as
startup options (so ``RESET ALL`` keeps them). Each query runs in its own ``BEGIN
READ ONLY`` transaction, always rolled back, and then ``DISCARD ALL`` drops
whatever the session kept (advisory locks, prepared statements, settings).
Queries are sent with the extended protocol, which the server refuses to run as
more than one statement, so ``SELECT 1; COMMIT; DROP ...`` cannot escape the
transaction whatever a parser thinks of it. Rows stream within byte limits
(``_pg_fetch``) and the stream is cancelled past a cap.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from assay.errors import (
    DatabaseUnavailableError,
    QueryError,
    QueryRefusedError,
    QueryTimeoutError,
    QueryTooLargeError,
    require_extra,
)
from assay.evaluators.sql.backends.base import Database, ExecutionLimits, QueryResult
from assay.schemas import Example

try:
    import psycopg
    import sqlalchemy as sa
    from psycopg import errors as pg_errors
    from psycopg.pq import ExecStatus, TransactionStatus
except ImportError:  # exercised by tests/test_errors.py with psycopg hidden
    for _module in ("psycopg", "sqlalchemy"):
        require_extra(_module, "postgres", feature="PostgreSQL databases")
    raise

from assay.errors import PrivilegedRoleError
from assay.evaluators.sql.backends._pg_fetch import fetch_measured  # noqa: E402 - needs psycopg
from assay.evaluators.sql.backends._pg_role import check_role

# the names before 0.1.0 (assay.errors.ALIASES), still importable from here
PrivilegedRole = PrivilegedRoleError

_DRIVER = "postgresql+psycopg"


class PostgresDatabase(Database):
    """A PostgreSQL database given by URL; connections are pooled per evaluator."""

    dialect = "postgres"

    def __init__(self, url: str, limits: ExecutionLimits, *, allow_privileged_role: bool = False) -> None:
        self.url = _psycopg_url(url)
        self.limits = limits
        self.allow_privileged_role = allow_privileged_role
        self.description = self.url.render_as_string(hide_password=True)
        self._engine: sa.Engine | None = None
        self._role_checked = False
        self._lock = threading.Lock()

    def _get_engine(self) -> sa.Engine:
        with self._lock:
            if self._engine is None:
                connect_args: dict[str, Any] = {
                    "prepare_threshold": None,  # DISCARD ALL drops prepared statements
                    "options": _session_options(self.url, self.limits),
                }
                if "connect_timeout" not in self.url.query:
                    connect_args["connect_timeout"] = max(2, math.ceil(self.limits.timeout))
                self._engine = sa.create_engine(self.url, pool_pre_ping=True, connect_args=connect_args)
            return self._engine

    @contextmanager
    def session(self, example: Example | None) -> Iterator[PostgresSession]:
        try:
            pooled = self._get_engine().raw_connection()
        except (sa.exc.DBAPIError, psycopg.Error) as exc:
            reason = exc.orig if isinstance(exc, sa.exc.DBAPIError) else exc
            raise DatabaseUnavailableError(f"cannot connect to {self.description}: {reason}") from None
        connection = pooled.driver_connection
        assert isinstance(connection, psycopg.Connection)
        try:
            self._check_role(connection)
            yield PostgresSession(connection, self.limits)
        finally:
            if connection.broken or connection.closed:
                pooled.invalidate()  # never hand a connection in an unknown state to the pool
            pooled.close()

    def _check_role(self, connection: psycopg.Connection[Any]) -> None:
        if self._role_checked or self.allow_privileged_role:
            return
        try:
            check_role(connection, self.description)
        except psycopg.Error as exc:
            raise DatabaseUnavailableError(
                f"cannot read the role's privileges on {self.description}: {exc}"
            ) from None
        self._role_checked = True

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


def _session_options(url: sa.URL, limits: ExecutionLimits) -> str:
    """libpq startup options: the session's defaults, which RESET ALL returns to."""
    timeout_ms = max(1, round(limits.timeout * 1000))
    settings = {
        "default_transaction_read_only": "on",
        "statement_timeout": timeout_ms,
        "lock_timeout": timeout_ms,
        "idle_in_transaction_session_timeout": max(10_000, 2 * timeout_ms),
    }
    given = url.query.get("options", "")
    given_text = " ".join(given) if isinstance(given, tuple) else given
    ours = " ".join(f"-c {name}={value}" for name, value in settings.items())
    return f"{given_text} {ours}".strip()  # later -c wins: ours


class PostgresSession:
    """Runs queries on one pooled connection, each in a rolled-back READ ONLY transaction."""

    def __init__(self, connection: psycopg.Connection[Any], limits: ExecutionLimits) -> None:
        self.connection = connection
        self.limits = limits

    def run(self, sql: str) -> QueryResult:
        connection = self.connection
        if connection.closed or connection.broken:
            raise DatabaseUnavailableError("the PostgreSQL connection was closed after a failed query")
        if connection.info.transaction_status != TransactionStatus.IDLE:
            connection.rollback()
        connection.read_only = True  # the next BEGIN is BEGIN READ ONLY
        cursor = connection.cursor()
        try:
            timeout_ms = max(1, round(self.limits.timeout * 1000))
            cursor.execute(f"SET LOCAL statement_timeout = {timeout_ms}")
            started = time.perf_counter()
            columns, rows = fetch_measured(connection, cursor, sql, self.limits)
            elapsed_ms = (time.perf_counter() - started) * 1000
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
        """Roll back, then drop all session state; a connection that cannot is closed."""
        try:
            cursor.close()
            if not self.connection.broken:
                self.connection.rollback()
                _discard_session_state(self.connection)
        except psycopg.Error:
            self.connection.close()

    def _explain(self, exc: psycopg.Error) -> Exception:
        message = str(exc).strip()
        if self.connection.broken or self.connection.closed:
            return DatabaseUnavailableError(f"lost the PostgreSQL connection: {message}")
        if isinstance(exc, pg_errors.QueryCanceled):
            return QueryTimeoutError(
                f"query exceeded the {self.limits.timeout:g} s timeout and was cancelled"
            )
        if isinstance(exc, pg_errors.LockNotAvailable):
            return QueryTimeoutError(f"query waited past the {self.limits.timeout:g} s lock timeout")
        if isinstance(exc, (pg_errors.ReadOnlySqlTransaction, pg_errors.InsufficientPrivilege)):
            return QueryRefusedError(f"the read-only guard refused the query: {message}")
        if isinstance(exc, pg_errors.ProgramLimitExceeded):
            return QueryTooLargeError(message)
        if "multiple commands" in message:
            return QueryRefusedError("several statements: only a single query may run")
        return QueryError(message)


def _discard_session_state(connection: psycopg.Connection[Any]) -> None:
    """DISCARD ALL (outside any transaction): advisory locks, prepared statements, settings,
    temporary tables, LISTENs. The startup options survive it."""
    result = connection.pgconn.exec_(b"DISCARD ALL")
    if result.status != ExecStatus.COMMAND_OK:
        raise pg_errors.error_from_result(result, encoding=connection.info.encoding)


__all__ = ["PostgresDatabase", "PostgresSession", "PrivilegedRoleError"]
