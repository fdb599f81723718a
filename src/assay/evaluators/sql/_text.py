"""Getting SQL out of what a model returned, and the reference out of an example."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assay.errors import EvaluatorInputError
from assay.evaluators._fields import as_text, pick
from assay.evaluators.sql._values import Row, normalize_row
from assay.schemas import Example, Run

# Keys tried in order when no output_key is given; "output" is where a target's bare string lands.
DEFAULT_OUTPUT_KEYS = ("sql", "text", "output")
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_SQL_TAGS = frozenset({"sql", "sqlite", "postgres", "postgresql", "psql", "pgsql", "mysql", "tsql"})


def strip_fences(text: str) -> str:
    """The SQL inside a markdown fence (the first ```sql block, else the first block), or the text."""
    blocks = _FENCE.findall(text)
    if not blocks:
        return text.strip()
    for language, body in blocks:
        if language.lower() in _SQL_TAGS:
            return str(body).strip()
    return str(blocks[0][1]).strip()


def generated_sql(run: Run, output_key: str | None) -> str:
    """The SQL a run produced: ``run.outputs[output_key]``, else the first default key, else the only value.

    The value may be text or a chat message (its content); markdown fences are stripped.
    """
    if not run.outputs:
        failure = f" (the target failed: {run.error})" if run.error else ""
        raise EvaluatorInputError(f"run {run.id} has no outputs to read SQL from{failure}")
    value = pick(
        run.outputs, output_key, where="run.outputs", option="output_key", candidates=DEFAULT_OUTPUT_KEYS
    )
    if value is None:
        return ""
    if not (isinstance(value, str) or _is_message(value)):
        raise EvaluatorInputError(
            f"the generated SQL in run.outputs must be text or a chat message, got {type(value).__name__}"
        )
    return strip_fences(as_text(value))


def _is_message(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("content"), str)


@dataclass(frozen=True)
class Reference:
    """What the generated SQL is compared with: a query, or rows given outright."""

    sql: str | None = None
    rows: list[Row] | None = None
    columns: tuple[str, ...] | None = None

    @property
    def width(self) -> int | None:
        if self.columns is not None:
            return len(self.columns)
        return len(self.rows[0]) if self.rows else None


def read_reference(example: Example | None) -> Reference:
    """``example.outputs["sql"]``, else ``["expected_rows"]`` (with optional ``["expected_columns"]``)."""
    outputs = example.outputs if example is not None else None
    if outputs and isinstance(outputs.get("sql"), str) and outputs["sql"].strip():
        return Reference(sql=strip_fences(outputs["sql"]))
    if outputs and "expected_rows" in outputs:
        return _expected_rows(outputs["expected_rows"], outputs.get("expected_columns"))
    where = f"example {example.id}" if example is not None else "no example was given"
    raise EvaluatorInputError(
        f"SQLExecutionEvaluator needs a reference ({where}): example.outputs['sql'] (a query) "
        "or example.outputs['expected_rows'] (a list of rows)"
    )


def _expected_rows(rows: Any, columns: Any) -> Reference:
    if not isinstance(rows, (list, tuple)):
        raise EvaluatorInputError(
            f"example.outputs['expected_rows'] must be a list of rows, got {type(rows).__name__}"
        )
    names = _column_names(columns)
    if rows and all(isinstance(row, dict) for row in rows):
        names = names or tuple(str(key) for key in rows[0])
        return Reference(rows=[_dict_row(row, names, i) for i, row in enumerate(rows)], columns=names)
    normalized = []
    for index, row in enumerate(rows):
        if not isinstance(row, (list, tuple)):
            raise EvaluatorInputError(
                f"example.outputs['expected_rows'][{index}] must be a list of values or a dict, "
                f"got {type(row).__name__}"
            )
        normalized.append(normalize_row(row))
    _check_width(normalized, names)
    return Reference(rows=normalized, columns=names)


def _column_names(columns: Any) -> tuple[str, ...] | None:
    if columns is None:
        return None
    if not isinstance(columns, (list, tuple)) or not all(isinstance(c, str) for c in columns):
        raise EvaluatorInputError("example.outputs['expected_columns'] must be a list of column names")
    return tuple(columns)


def _dict_row(row: dict[str, Any], names: tuple[str, ...], index: int) -> Row:
    missing = [name for name in names if name not in row]
    if missing or len(row) != len(names):
        raise EvaluatorInputError(
            f"example.outputs['expected_rows'][{index}] has keys {sorted(row)}, expected {list(names)}"
        )
    return normalize_row(row[name] for name in names)


def _check_width(rows: list[Row], names: tuple[str, ...] | None) -> None:
    width = len(names) if names is not None else (len(rows[0]) if rows else None)
    for index, row in enumerate(rows):
        if len(row) != width:
            raise EvaluatorInputError(
                f"example.outputs['expected_rows'][{index}] has {len(row)} values, expected {width}"
            )
