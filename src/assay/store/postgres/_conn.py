"""A psycopg connection that answers like a ``sqlite3`` one, so the store's queries run unchanged.

``execute`` and ``executemany`` take the store's SQLite-dialect SQL (translated by
``postgres_dialect``) and return a cursor whose rows index by position and by column
name, as ``sqlite3.Row`` does. Parameters are adapted as ``sqlite3`` would store them:
booleans as 0 and 1, and NUL characters (which PostgreSQL text cannot hold) as the
two characters ``\\0``. NUMERIC results come back as int when whole, else float.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

from assay.errors import require_extra
from assay.store.postgres._dialect import translate

__all__ = ["PGConnection", "Row", "connect"]


class Row(tuple[Any, ...]):
    """A result row: by position (``row[0]``), by column name (``row["id"]``), ``keys()``."""

    _index: dict[str, int] = {}
    _names: tuple[str, ...] = ()

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


@functools.lru_cache(maxsize=512)
def _row_class(names: tuple[str, ...]) -> type[Row]:
    index = {name: position for position, name in enumerate(names)}
    return type("Row", (Row,), {"_index": index, "_names": names})


def _row_factory(cursor: Any) -> Any:
    description = cursor.description
    if description is None:
        return tuple
    cls = _row_class(tuple(column.name for column in description))

    def make(values: Sequence[Any]) -> Row:
        return cls(values)

    return make


class PGCursor:
    """The few ``sqlite3.Cursor`` answers the store uses."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    @property
    def rowcount(self) -> int:
        return int(self._cursor.rowcount)

    def fetchone(self) -> Row | None:
        row: Row | None = self._cursor.fetchone()
        return row

    def fetchall(self) -> list[Row]:
        rows: list[Row] = self._cursor.fetchall()
        return rows

    def __iter__(self) -> Iterator[Row]:
        return iter(self._cursor)


class PGConnection:
    """One psycopg connection (autocommit; ``transaction`` groups statements)."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> PGCursor:
        single = _single_row_insert(sql)
        if single is not None and not isinstance(params, Mapping):
            # psycopg parses statements longer than 4 kB afresh every time (tens of ms for
            # a few hundred rows): one row's statement, in a pipeline, is parsed once.
            one, width = single
            values = list(params)
            return self.executemany(one, [values[i : i + width] for i in range(0, len(values), width)])
        cursor = self.raw.cursor(row_factory=_row_factory)
        cursor.execute(translate(sql), _adapt(params))
        return PGCursor(cursor)

    def executemany(self, sql: str, rows: Any) -> PGCursor:
        cursor = self.raw.cursor(row_factory=_row_factory)
        batch = [_adapt(row) for row in rows]
        if batch:
            cursor.executemany(translate(sql), batch)
        return PGCursor(cursor)

    def copy_rows(self, table: str, columns: str, rows: Sequence[Sequence[Any]]) -> None:
        """Rows into ``table`` by ``COPY ... FROM STDIN``: the server parses one stream
        instead of a statement per row (the multi-row ``INSERT`` it replaces, with the
        same outcome: a duplicate key fails the whole copy, and the transaction)."""
        if not rows:
            return
        if not _plain(rows):
            rows = [[_value(value) for value in row] for row in rows]
        cursor = self.raw.cursor()
        with cursor.copy(f"COPY {table} ({_quoted(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def copy_text(self, table: str, columns: str, data: bytes) -> None:
        """Rows already in COPY's text format (``_copy_text``) into ``table``, in one write."""
        if not data:
            return
        with self.raw.cursor().copy(f"COPY {table} ({_quoted(columns)}) FROM STDIN") as copy:
            copy.write(data)

    def close(self) -> None:
        self.raw.close()


@functools.lru_cache(maxsize=64)
def _quoted(columns: str) -> str:
    """A column list as PostgreSQL takes it (``binary`` is reserved there)."""
    return ", ".join(f'"{name.strip()}"' for name in columns.split(","))


_MULTI_ROW = re.compile(r"^(INSERT INTO \w+ \([^)]*\) VALUES )(\([?, ]+\))(, \([?, ]+\))+$")


@functools.lru_cache(maxsize=256)
def _single_row_insert(sql: str) -> tuple[str, int] | None:
    """(one row's statement, its parameter count) of a multi-row ``INSERT ... VALUES``."""
    match = _MULTI_ROW.match(sql)
    if match is None:
        return None
    row = match.group(2)
    return match.group(1) + row, row.count("?")


def _plain(rows: Sequence[Sequence[Any]]) -> bool:
    """Whether no value of ``rows`` needs ``_value`` (a NUL, a bool), found by one pass of
    C over their ``repr`` (which writes a NUL as ``\\x00``) instead of a call per value:
    most batches have none. A string that merely looks like one costs its batch the
    calls, nothing else."""
    text = repr(rows)
    return "\\x00" not in text and "True" not in text and "False" not in text


def _value(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and "\x00" in value:
        return value.replace("\x00", "\\0")
    return value


def _adapt(params: Sequence[Any] | Mapping[str, Any]) -> Any:
    if isinstance(params, Mapping):
        return {key: _value(value) for key, value in params.items()}
    return [_value(value) for value in params]


def connect(url: str, *, application_name: str = "assay", read_only: bool = False) -> PGConnection:
    """A new connection to ``url`` (libpq form), in autocommit mode; with ``read_only``,
    a session in which PostgreSQL refuses every write."""
    psycopg = require_extra("psycopg", "postgres", feature="the PostgreSQL store")
    options = "-c default_transaction_read_only=on" if read_only else ""
    raw = psycopg.connect(  # UTF-8 whatever PGCLIENTENCODING says: the rows' COPY text is
        url,
        autocommit=True,
        application_name=application_name,
        connect_timeout=30,
        options=options,
        client_encoding="UTF8",
    )
    raw.adapters.register_loader("numeric", _numeric_loader(psycopg))
    return PGConnection(raw)


@functools.cache
def _numeric_loader(psycopg: Any) -> Any:
    from psycopg.types.numeric import NumericLoader

    class WholeOrFloat(NumericLoader):
        """SUM and AVG of integers are NUMERIC in PostgreSQL; SQLite gives int or float."""

        def load(self, data: Any) -> Any:
            number: Decimal = super().load(data)
            if number == number.to_integral_value() and number.as_tuple().exponent == 0:
                return int(number)
            return float(number)

    return WholeOrFloat
