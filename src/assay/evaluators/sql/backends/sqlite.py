"""SQLite through the standard library, read-only by construction.

Three layers keep a database file unchanged, each enough on its own for writes:
the file is opened with ``mode=ro``; an authorizer allows only reading (no
ATTACH, PRAGMA, DML or DDL reaches the engine); and ``sqlite3`` runs one
statement per call. A watchdog thread interrupts queries past their deadline.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assay.errors import (
    DatabaseUnavailableError,
    FixtureError,
    QueryError,
    QueryRefusedError,
    QueryTimeoutError,
    QueryTooLargeError,
)
from assay.evaluators.sql._refused import REFUSED_FUNCTIONS
from assay.evaluators.sql.backends._budget import ResultBudget
from assay.evaluators.sql.backends._watchdog import WATCHDOG
from assay.evaluators.sql.backends.base import Database, ExecutionLimits, QueryResult
from assay.schemas import Example

__all__ = ["SQLiteFile", "SQLiteFixtures", "SQLiteSession"]


_HEADER = b"SQLite format 3\x00"
# sqlite3.h limit categories (the Python names exist from 3.11 only).
_LIMIT_LENGTH = 0
_LIMIT_ATTACHED = 7
_LIMIT_COLUMN = 2
# Columns a result (or table) may have; also what a value's share of a row assumes
# when a query cannot be probed for its width.
_MAX_COLUMNS = 1000
_FETCH_CHUNK = 64

# SQLITE_RECURSIVE is 33 in sqlite3.h; older Pythons do not export the name.
_READ_ACTIONS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, getattr(sqlite3, "SQLITE_RECURSIVE", 33)}
)
_FIXTURE_DENIED = frozenset({sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH})


def _read_only_authorizer(action: int, arg1: str | None, arg2: str | None, *_: Any) -> int:
    if action == sqlite3.SQLITE_FUNCTION:
        return sqlite3.SQLITE_DENY if (arg2 or "").lower() in REFUSED_FUNCTIONS else sqlite3.SQLITE_OK
    return sqlite3.SQLITE_OK if action in _READ_ACTIONS else sqlite3.SQLITE_DENY


def _fixture_authorizer(action: int, arg1: str | None, arg2: str | None, *_: Any) -> int:
    """Building a fixture may create and fill tables, but not reach other files."""
    if action in _FIXTURE_DENIED:
        return sqlite3.SQLITE_DENY
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in REFUSED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


class SQLiteSession:
    """Runs queries on one guarded connection, measuring rows as they stream."""

    def __init__(self, connection: sqlite3.Connection, limits: ExecutionLimits) -> None:
        self.connection = connection
        self.limits = limits

    def run(self, sql: str) -> QueryResult:
        started = time.perf_counter()
        cursor = self.connection.cursor()
        with WATCHDOG.deadline(self.connection, self.limits.timeout) as deadline:
            try:
                # SQLite builds a row's values before Python sees any: cap each value so a
                # whole row stays within max_row_bytes (checked again once it is fetched).
                _set_limit(self.connection, _LIMIT_LENGTH, self._value_cap(sql))
                cursor.execute(sql)
                rows = self._fetch(cursor)
            except sqlite3.Error as exc:
                raise self._explain(exc, deadline.expired) from None
        columns = tuple(str(column[0]) for column in cursor.description or ())
        cursor.close()
        truncated = len(rows) > self.limits.max_rows
        return QueryResult(
            columns=columns,
            rows=rows[: self.limits.max_rows],
            elapsed_ms=(time.perf_counter() - started) * 1000,
            truncated=truncated,
        )

    def _value_cap(self, sql: str) -> int:
        """Largest value a query with this many columns may build: a share of the row budget."""
        limits = self.limits
        try:  # LIMIT 0 prepares the query without computing a row
            probe = self.connection.execute(f"SELECT * FROM (\n{_without_end(sql)}\n) LIMIT 0")
            width = len(probe.description or ()) or 1
            probe.close()
        except (sqlite3.Error, sqlite3.Warning):
            width = _MAX_COLUMNS  # not a plain query: it will most likely fail on its own
        return max(1, min(limits.max_value_bytes, limits.max_row_bytes // width))

    def _fetch(self, cursor: sqlite3.Cursor) -> list[Any]:
        budget = ResultBudget(self.limits)
        rows: list[Any] = []
        wanted = self.limits.max_rows + 1
        while len(rows) < wanted:
            chunk = cursor.fetchmany(min(_FETCH_CHUNK, wanted - len(rows)))
            if not chunk:
                break
            for row in chunk:
                budget.add_cells(row)
            rows.extend(chunk)
        return rows

    def _explain(self, exc: sqlite3.Error, expired: bool) -> QueryError:
        message = str(exc)
        if expired and message == "interrupted":
            return QueryTimeoutError(
                f"query exceeded the {self.limits.timeout:g} s timeout and was interrupted"
            )
        if "string or blob too big" in message:
            return QueryTooLargeError(
                f"a value is larger than the {self._value_limit_text()} a value of this query may hold"
            )
        if "not authorized" in message or "authorization denied" in message:
            return QueryRefusedError(f"the read-only guard refused the query: {message}")
        if "one statement at a time" in message:
            return QueryRefusedError("several statements: only a single query may run")
        if "readonly" in message or "read-only" in message:
            return QueryRefusedError(f"the database is read-only: {message}")
        return QueryError(message)

    def _value_limit_text(self) -> str:
        cap = self.connection.getlimit(_LIMIT_LENGTH) if hasattr(self.connection, "getlimit") else None
        shown = f"{cap:,} bytes" if cap is not None else "size limit"
        return (
            f"{shown} (max_value_bytes={self.limits.max_value_bytes:,}, "
            f"max_row_bytes={self.limits.max_row_bytes:,} shared by the columns)"
        )


_TRAILING_COMMENT = re.compile(r"(--[^\n]*|/\*(?:(?!\*/).)*\*/)\Z", re.DOTALL)


def _without_end(sql: str) -> str:
    """The query without what may follow it (semicolons, comments), to nest it as a subquery.

    A comment opener inside a quoted string or name is cut too, but then what is left
    holds an unclosed quote and the probe fails: the conservative cap applies.
    """
    body = sql
    while True:
        trimmed = _TRAILING_COMMENT.sub("", body.rstrip().rstrip(";").rstrip())
        if trimmed == body:
            return body
        body = trimmed


def _guard(connection: sqlite3.Connection) -> None:
    _set_limit(connection, _LIMIT_ATTACHED, 0)
    _set_limit(connection, _LIMIT_COLUMN, _MAX_COLUMNS)
    connection.set_authorizer(_read_only_authorizer)


def _set_limit(connection: sqlite3.Connection, category: int, value: int) -> None:
    set_limit = getattr(connection, "setlimit", None)  # Python 3.11+
    if set_limit is not None:
        set_limit(category, value)


class SQLiteFile(Database):
    """A SQLite database file, opened read-only for each evaluation."""

    dialect = "sqlite"

    def __init__(self, path: Path, limits: ExecutionLimits) -> None:
        self.path = path.expanduser().resolve()
        self.limits = limits
        self.description = str(self.path)
        _check_sqlite_file(self.path)
        self._uri = f"{self.path.as_uri()}?mode=ro"

    @contextmanager
    def session(self, example: Example | None) -> Iterator[SQLiteSession]:
        try:
            connection = sqlite3.connect(self._uri, uri=True, isolation_level=None)
        except sqlite3.Error as exc:
            raise DatabaseUnavailableError(
                f"cannot open SQLite database {self.path} read-only: {exc}"
            ) from None
        try:
            _guard(connection)
            yield SQLiteSession(connection, self.limits)
        finally:
            connection.close()


def _check_sqlite_file(path: Path) -> None:
    if not path.is_file():
        raise FileNotFoundError(f"SQLite database file not found: {path}")
    with path.open("rb") as handle:
        header = handle.read(len(_HEADER))
    if header != _HEADER and path.stat().st_size > 0:
        raise ValueError(f"{path} is not a SQLite database (its header is not 'SQLite format 3')")


class SQLiteFixtures(Database):
    """A fresh in-memory database per example, from ``schema_sql`` and ``seed_sql`` in its inputs."""

    dialect = "sqlite"
    description = "in-memory SQLite built from example.inputs['schema_sql'] and ['seed_sql']"

    def __init__(self, limits: ExecutionLimits) -> None:
        self.limits = limits

    @contextmanager
    def session(self, example: Example | None) -> Iterator[SQLiteSession]:
        schema, seed = _fixture_scripts(example)
        connection = sqlite3.connect(":memory:", isolation_level=None)
        try:
            _build_fixture(connection, schema, seed, self.limits.timeout)
            _guard(connection)
            yield SQLiteSession(connection, self.limits)
        finally:
            connection.close()


def _fixture_scripts(example: Example | None) -> tuple[str, str]:
    inputs = example.inputs if example is not None else {}
    schema = inputs.get("schema_sql")
    if not isinstance(schema, str) or not schema.strip():
        raise FixtureError(
            "no database to run SQL against: pass database=<SQLite path or URL> to "
            "SQLExecutionEvaluator, or give each example inputs['schema_sql'] (and optionally "
            "inputs['seed_sql']) to build a fresh in-memory database"
        )
    seed = inputs.get("seed_sql") or ""
    if not isinstance(seed, str):
        raise FixtureError(f"example.inputs['seed_sql'] must be SQL text, got {type(seed).__name__}")
    return schema, seed


def _build_fixture(connection: sqlite3.Connection, schema: str, seed: str, timeout: float) -> None:
    _set_limit(connection, _LIMIT_ATTACHED, 0)
    connection.set_authorizer(_fixture_authorizer)
    for field, script in (("schema_sql", schema), ("seed_sql", seed)):
        _run_script(connection, field, script, timeout)


def _run_script(connection: sqlite3.Connection, field: str, script: str, timeout: float) -> None:
    with WATCHDOG.deadline(connection, timeout) as deadline:
        try:
            connection.executescript(script)
        except sqlite3.Error as exc:
            problem = f"took more than {timeout:g} s" if deadline.expired else str(exc)
            raise FixtureError(
                f"example.inputs[{field!r}] failed to build the fixture database: {problem}"
            ) from None
