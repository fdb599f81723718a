"""The database interface of the SQL evaluator and its errors.

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
from typing import Any, Protocol, Union

from assay.errors import AssayError
from assay.schemas import Example

__all__ = [
    "Database", "DatabaseSpec", "DatabaseUnavailable", "ExecutionLimits", "FixtureError",
    "QueryError", "QueryRefused", "QueryResult", "QueryTimeout", "Session",
]


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


class QueryError(AssayError):
    """The database rejected the query or failed while running it."""


class QueryTimeout(QueryError):
    """The query ran past its deadline and was interrupted."""


class QueryRefused(QueryError):
    """The database's own read-only guard stopped the query."""


class DatabaseUnavailable(AssayError):
    """The database could not be opened or reached (not the query's fault)."""


class FixtureError(AssayError):
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
