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

from assay.errors import (
    DatabaseUnavailableError,
    FixtureError,
    QueryError,
    QueryRefusedError,
    QueryTimeoutError,
    QueryTooLargeError,
)
from assay.schemas import Example

# the names before 0.1.0 (assay.errors.ALIASES), still importable from here
DatabaseUnavailable = DatabaseUnavailableError
QueryRefused = QueryRefusedError
QueryTimeout = QueryTimeoutError
QueryTooLarge = QueryTooLargeError

__all__ = [
    "Database",
    "DatabaseSpec",
    "DatabaseUnavailableError",
    "ExecutionLimits",
    "FixtureError",
    "QueryError",
    "QueryRefusedError",
    "QueryResult",
    "QueryTimeoutError",
    "QueryTooLargeError",
    "Session",
]


DatabaseSpec = Union[str, "os.PathLike[str]", None]


MIB = 1024 * 1024


@dataclass(frozen=True)
class ExecutionLimits:
    """What one query may cost: time, rows, and bytes as they are fetched.

    Bytes are counted on the values as the driver hands them over (text and blobs
    by length, other values by their text form on PostgreSQL); a result past any
    byte limit is abandoned while it streams, so the evaluating process never
    holds more than about ``max_result_bytes`` of one result.
    """

    timeout: float = 5.0  # seconds per query
    max_rows: int = 10_000  # rows kept per result; more marks the result truncated
    max_value_bytes: int = 1 * MIB  # one cell
    max_row_bytes: int = 4 * MIB  # the cells of one row together
    max_result_bytes: int = 32 * MIB  # every row of one result together


@dataclass(frozen=True)
class QueryResult:
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    elapsed_ms: float
    truncated: bool = False  # the query returned more than max_rows rows


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
