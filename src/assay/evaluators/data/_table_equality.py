"""Comparing the table a script wrote with the expected one: schema first, then rows
(the SQL evaluator's row matching: multiset or ordered, numeric tolerance, NULLs)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.errors import EvaluatorInputError
from assay.evaluators.data._files import Table
from assay.evaluators.sql._result_equality import CompareOptions, ResultSet, compare_results
from assay.evaluators.sql._values import NAN, Row, Tolerance, normalize_row, row_to_json

TYPES = ("int", "float", "number", "string", "bool")
SHOWN_ROWS = 5


@dataclass(frozen=True)
class TableOptions:
    ordered: bool = False
    tolerance: Tolerance = Tolerance(1e-6, 1e-6)
    column_order: bool = False
    nan_is_null: bool = True
    schema: dict[str, str] | None = None  # {column: type}, checked when given


@dataclass
class TableVerdict:
    match: bool
    reason: str
    precision: float = 0.0
    recall: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)


def compare_tables(expected: Table, actual: Table, options: TableOptions) -> TableVerdict:
    schema_problem = _schema_problem(expected, actual, options)
    if schema_problem is not None:
        return TableVerdict(
            False,
            schema_problem,
            details={"expected_columns": list(expected.columns), "actual_columns": list(actual.columns)},
        )
    order = {name.lower(): i for i, name in enumerate(actual.columns)}
    aligned = [tuple(row[order[c.lower()]] for c in expected.columns) for row in actual.rows]
    reference_rows = [_cells(row, options) for row in expected.rows]
    actual_rows = [_cells(row, options) for row in aligned]
    comparison = compare_results(
        ResultSet(reference_rows, expected.columns, len(expected.columns)),
        ResultSet(actual_rows, expected.columns, len(expected.columns)),
        CompareOptions(
            ordered=options.ordered,
            tolerance=options.tolerance,
            column_matching="positional",
            max_diff_rows=SHOWN_ROWS,
        ),
    )
    details = {
        "expected_rows": len(reference_rows),
        "actual_rows": len(actual_rows),
        "matched_rows": comparison.matched_rows,
        "columns": list(expected.columns),
        "missing_rows": [row_to_json(r) for r in comparison.missing_rows[:SHOWN_ROWS]],
        "unexpected_rows": [row_to_json(r) for r in comparison.unexpected_rows[:SHOWN_ROWS]],
        "first_order_difference": comparison.first_order_difference,
    }
    return TableVerdict(comparison.match, comparison.reason, comparison.precision, comparison.recall, details)


def _cells(row: tuple[Any, ...], options: TableOptions) -> Row:
    cells = normalize_row(row)
    if options.nan_is_null:
        return tuple(None if cell is NAN else cell for cell in cells)
    return cells


def _schema_problem(expected: Table, actual: Table, options: TableOptions) -> str | None:
    wanted = [c.lower() for c in expected.columns]
    got = [c.lower() for c in actual.columns]
    if len(set(got)) != len(got):
        return f"the output has duplicate column names: {list(actual.columns)}"
    missing = [c for c in expected.columns if c.lower() not in got]
    extra = [c for c in actual.columns if c.lower() not in wanted]
    if missing or extra:
        parts = ([f"missing {missing}"] if missing else []) + ([f"unexpected {extra}"] if extra else [])
        return "columns differ: " + ", ".join(parts)
    if options.column_order and got != wanted:
        return f"column order differs: expected {list(expected.columns)}, got {list(actual.columns)}"
    if options.schema:
        return _type_problem(actual, options.schema)
    return None


def _type_problem(actual: Table, schema: dict[str, str]) -> str | None:
    index = {name.lower(): i for i, name in enumerate(actual.columns)}
    for column, kind in schema.items():
        position = index.get(column.lower())
        if position is None:
            return f"column {column!r} of the schema is not in the output"
        for number, row in enumerate(actual.rows):
            value = row[position]
            if value is not None and not _has_type(value, kind):
                return (
                    f"column {column!r} should hold {kind} values; row {number} has "
                    f"{value!r} ({type(value).__name__})"
                )
    return None


def _has_type(value: Any, kind: str) -> bool:
    if kind == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind == "int":
        return isinstance(value, int)
    if kind == "float":  # CSV has no types: 832 in a float column is read as an integer
        return isinstance(value, (int, float))
    if kind == "number":
        return isinstance(value, (int, float))
    return isinstance(value, str)


def check_schema(schema: Any, where: str) -> dict[str, str] | None:
    if schema is None:
        return None
    if not isinstance(schema, dict) or not all(isinstance(k, str) and v in TYPES for k, v in schema.items()):
        raise EvaluatorInputError(f"{where} must map column names to one of {', '.join(TYPES)}")
    return dict(schema)
