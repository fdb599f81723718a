"""Where SQL runs: the database interface, its errors, and the factory from a user's ``database``.

Every backend gives read-only sessions: SQLite files are opened read-only with an
authorizer that allows nothing but reading, per-example fixtures are private
in-memory databases, and PostgreSQL runs each query in a READ ONLY transaction
that is rolled back. Each query has a deadline and a row cap.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Union

from assay.schemas import Example

DatabaseSpec = Union[str, "os.PathLike[str]", None]


@dataclass(frozen=True)
class ExecutionLimits:
    timeout: float = 5.0  # seconds per query
    max_rows: int = 10_000  # rows kept per result; more marks the result truncated


@dataclass(frozen=True)
class QueryResult:
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    elapsed_ms: float
    truncated: bool = False  # the query returned more than max_rows rows


class QueryError(Exception):
    """The database rejected the query or failed while running it."""


class QueryTimeout(QueryError):
    """The query ran past its deadline and was interrupted."""


class QueryRefused(QueryError):
    """The database's own read-only guard stopped the query."""


class DatabaseUnavailable(Exception):
    """The database could not be opened or reached (not the query's fault)."""


class FixtureError(Exception):
    """An example's ``schema_sql``/``seed_sql`` could not be built into a database."""


class Session(Protocol):
    def run(self, sql: str) -> QueryResult: ...


class Database(ABC):
    """A source of read-only sessions; ``dialect`` is the sqlglot dialect its SQL is read in."""

    dialect: str
    description: str  # for metadata: a path or a URL without its password

    @abstractmethod
    def session(self, example: Example | None) -> AbstractContextManager[Session]: ...

    def close(self) -> None:  # noqa: B027 - an optional hook, not abstract
        """Release pooled connections (a no-op where there are none)."""


def open_database(spec: DatabaseSpec, limits: ExecutionLimits) -> Database:
    """The backend for ``spec``: None (fixture per example), a SQLite path, or a URL."""
    from assay.evaluators import _sql_sqlite

    if spec is None:
        return _sql_sqlite.SQLiteFixtures(limits)
    if isinstance(spec, os.PathLike):
        return _sql_sqlite.SQLiteFile(Path(os.fspath(spec)), limits)
    if not isinstance(spec, str):
        raise TypeError(
            f"database must be a SQLite file path, a database URL or None, got {type(spec).__name__}"
        )
    if "://" not in spec:
        return _sql_sqlite.SQLiteFile(Path(spec), limits)
    scheme = spec.split("://", 1)[0].lower()
    if scheme == "sqlite":
        return _sql_sqlite.SQLiteFile(_sqlite_url_path(spec), limits)
    if scheme.split("+", 1)[0] in ("postgresql", "postgres"):
        from assay.evaluators import _sql_postgres

        return _sql_postgres.PostgresDatabase(spec, limits)
    raise ValueError(
        f"unsupported database URL scheme {scheme!r}: SQLExecutionEvaluator runs SQLite files "
        "(a path or sqlite:///path) and PostgreSQL (postgresql://...) read-only"
    )


def _sqlite_url_path(url: str) -> Path:
    """``sqlite:///relative.db`` and ``sqlite:////absolute.db``, as SQLAlchemy spells them."""
    rest = url.split("://", 1)[1]
    path = rest.removeprefix("/")
    path = path.split("?", 1)[0]
    if path in ("", ":memory:"):
        raise ValueError(
            f"{url!r} is an empty in-memory database; give a SQLite file, or database=None "
            "with example.inputs['schema_sql'] to build one per example"
        )
    return Path(path)
