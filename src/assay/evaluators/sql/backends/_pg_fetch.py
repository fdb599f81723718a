"""Fetching a PostgreSQL result within byte limits, measured by the server before it is sent.

A row reaches libpq whole, so checking sizes after the fact would still let one
``repeat('x', 1e9)`` into memory. Instead the query runs wrapped: the server
computes each cell's size (``octet_length`` of its text form, which is what the
text protocol sends), blanks every cell of a row past a limit, and reports the
sizes; the client abandons the stream at the first row past a limit. Rows come
in chunks small enough that a chunk of rows at the row limit stays small.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from typing import Any, cast

import psycopg
from psycopg import errors as pg_errors
from psycopg.pq import ExecStatus

from assay.errors import QueryRefusedError
from assay.evaluators.sql.backends._budget import ResultBudget
from assay.evaluators.sql.backends.base import ExecutionLimits

_CHUNK_BYTES = 16 * 1024 * 1024
_MARKER = "assay-result-limit:"
_MARKER_SIZES = re.compile(re.escape(_MARKER) + r"(\d+):(\d+)")
_MAX_CHUNK_ROWS = 500


def describe(connection: psycopg.Connection[Any], sql: str) -> tuple[str, ...]:
    """The statement's column names, from the server's parse of it (runs nothing)."""
    encoding = connection.info.encoding
    pgconn = connection.pgconn
    prepared = pgconn.prepare(b"", sql.encode(encoding))
    if prepared.status != ExecStatus.COMMAND_OK:
        raise pg_errors.error_from_result(prepared, encoding=encoding)
    described = pgconn.describe_prepared(b"")
    if described.status != ExecStatus.COMMAND_OK:
        raise pg_errors.error_from_result(described, encoding=encoding)
    return tuple((described.fname(index) or b"").decode(encoding) for index in range(described.nfields))


def measured_query(sql: str, width: int, limits: ExecutionLimits) -> str:
    """``sql`` as a subquery whose cells are blanked past the limits, plus two size columns."""
    body = sql.rstrip().rstrip(";")
    names = [f"c{index}" for index in range(width)]
    sizes = ", ".join(f"octet_length(q.{name}::text) AS n{index}" for index, name in enumerate(names))
    counted = [f"coalesce(n.n{index}, 0)" for index in range(width)]
    fits = f"s.largest <= {limits.max_value_bytes} AND s.row_bytes <= {limits.max_row_bytes}"
    cells = ", ".join(f"CASE WHEN {fits} THEN q.{name} END" for name in names)
    # The first row past a limit stops the query on the server, naming its sizes.
    stop = f"('{_MARKER}' || s.largest || ':' || s.row_bytes)::int"
    return (
        f"SELECT {cells}, CASE WHEN {fits} THEN s.row_bytes ELSE {stop} END, s.largest\n"
        # OFFSET 0 keeps the planner from inlining the query's expressions into each
        # reference below (a repeat('x', 1e8) would be computed once per reference).
        f"FROM (SELECT * FROM (\n{body}\n) AS query OFFSET 0) AS q({', '.join(names)})\n"
        f"CROSS JOIN LATERAL (SELECT {sizes} OFFSET 0) AS n\n"
        f"CROSS JOIN LATERAL (SELECT {' + '.join(counted)} AS row_bytes, "
        f"greatest({', '.join(counted)}) AS largest) AS s"
    )


def fetch_measured(
    connection: psycopg.Connection[Any], cursor: psycopg.Cursor[Any], sql: str, limits: ExecutionLimits
) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
    """(columns, up to max_rows + 1 rows) of ``sql``; QueryTooLargeError past a byte limit."""
    columns = describe(connection, sql)
    if not columns:  # nothing comes back but a status
        _execute_without_rows(connection, sql)
        return columns, []
    wrapped = measured_query(sql, len(columns), limits)
    try:
        describe(connection, wrapped)
    except psycopg.Error as exc:
        raise QueryRefusedError(
            "only a query usable as a subquery may run (its result is measured as it streams): "
            f"{str(exc).strip().splitlines()[0]}"
        ) from None
    budget = ResultBudget(limits)

    def measured(row: tuple[Any, ...]) -> tuple[Any, ...]:
        budget.check_value(int(row[-1] or 0))
        budget.add_row(int(row[-2] or 0))
        return row[:-2]

    try:
        return columns, _stream(cursor, wrapped, limits, measured)
    except pg_errors.InvalidTextRepresentation as exc:
        sizes = _MARKER_SIZES.search(str(exc))
        if sizes is None:
            raise
        budget.check_value(int(sizes.group(1)))
        budget.add_row(int(sizes.group(2)))
        raise  # pragma: no cover - the server only stops a row past a limit


def _execute_without_rows(connection: psycopg.Connection[Any], sql: str) -> None:
    """Run a statement that returns no columns, through the extended protocol (one statement)."""
    encoding = connection.info.encoding
    result = connection.pgconn.exec_params(sql.encode(encoding), [])
    if result.status not in (ExecStatus.COMMAND_OK, ExecStatus.TUPLES_OK, ExecStatus.EMPTY_QUERY):
        raise pg_errors.error_from_result(result, encoding=encoding)


def _stream(
    cursor: psycopg.Cursor[Any], sql: str, limits: ExecutionLimits, keep: Any
) -> list[tuple[Any, ...]]:
    rows_per_chunk = max(1, min(_MAX_CHUNK_ROWS, _CHUNK_BYTES // limits.max_row_bytes))
    chunk = rows_per_chunk if psycopg.capabilities.has_stream_chunked() else 1
    stream = cast(Generator[Any, None, None], cursor.stream(sql, size=chunk))
    rows: list[tuple[Any, ...]] = []
    try:
        for row in stream:
            rows.append(keep(tuple(row)))
            if len(rows) > limits.max_rows:
                break
        return rows
    finally:
        stream.close()  # past a cap: cancels the rest of the query
