"""The multi-row inserts of runs and results: a statement that writes the usually-NULL
columns as NULL literals stores exactly what binding every value stores, whatever mix of
NULL and non-NULL values its rows have, at every statement size."""

from __future__ import annotations

import sqlite3
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from assay.store import _row_text

WIDTH = _row_text.RESULT_WIDTH
COLUMNS = _row_text.RESULT_COLUMNS

# values of every type a column is bound with, NULL included
value = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=5),
)


@st.composite
def result_rows(draw: Any) -> list[tuple[Any, ...]]:
    """Up to 600 rows (so statements of every size), made of a few drawn rows that leave
    the usually-NULL columns NULL, and sometimes a few rows that do not."""
    lean = []
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        row = [draw(value) for _ in range(WIDTH)]
        for index in _row_text.RESULT_USUALLY_NULL:
            row[index] = None
        lean.append(tuple(row))
    rows = [lean[i % len(lean)] for i in range(draw(st.integers(min_value=0, max_value=600)))]
    for where in draw(st.lists(st.integers(min_value=0, max_value=599), max_size=3)):
        if where < len(rows):
            column = draw(st.sampled_from(_row_text.RESULT_USUALLY_NULL))
            rows[where] = (*rows[where][:column], draw(value), *rows[where][column + 1 :])
    return rows


def _stored(rows: list[tuple[Any, ...]], usually_null: tuple[int, ...]) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(":memory:")
    names = COLUMNS.replace(" ", "").split(",")
    conn.execute(f"CREATE TABLE results (pk INTEGER PRIMARY KEY, {', '.join(names)})")  # no affinity
    _row_text.insert_many(conn, "results", COLUMNS, WIDTH, rows, usually_null)
    types = ", ".join(f"typeof({name})" for name in names)
    stored = conn.execute(f"SELECT *, {types} FROM results ORDER BY pk").fetchall()
    conn.close()
    return stored


@settings(max_examples=60, deadline=None)
@given(result_rows())
def test_null_literals_store_what_bound_nones_store(rows: list[tuple[Any, ...]]) -> None:
    lean = _stored(rows, _row_text.RESULT_USUALLY_NULL)
    assert lean == _stored(rows, ())
    assert len(lean) == len(rows)


class _Recording:
    """A connection that notes each statement and how many values it binds."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.statements: list[tuple[str, int]] = []

    def execute(self, sql: str, params: list[Any]) -> Any:
        self.statements.append((sql, len(params)))
        return self.conn.execute(sql, params)


def test_a_statement_whose_rows_all_leave_them_null_writes_them_as_literals() -> None:
    """The lean statement is the one used (what makes the inserts cheaper), and a single
    row with a value in one of the columns makes its statement bind them all."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE TABLE results ({COLUMNS})")
    recording = _Recording(conn)
    nulls = _row_text.RESULT_USUALLY_NULL
    row = tuple(None if i in nulls else i for i in range(WIDTH))
    valued = (*row[:4], "a value", *row[5:])
    for rows in ([row] * 4, [row, valued, row, row]):
        _row_text.insert_many(recording, "results", COLUMNS, WIDTH, rows, nulls)  # type: ignore[arg-type]
    (lean, lean_values), (full, full_values) = recording.statements
    assert lean.count("NULL") == 4 * len(nulls) and lean_values == 4 * (WIDTH - len(nulls))
    assert "NULL" not in full and full_values == 4 * WIDTH
    assert conn.execute("SELECT COUNT(*), COUNT(value) FROM results").fetchone() == (8, 1)
