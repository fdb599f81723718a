"""Getting SQL out of what a model returned, and the reference out of an example."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.evaluators._sql_values import Row, normalize_row
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
    """The SQL a run produced, from ``run.outputs[output_key]`` or the default keys."""
    outputs = run.outputs
    if outputs is None:
        failure = f" (the target failed: {run.error})" if run.error else ""
        raise ValueError(f"run {run.id} has no outputs to read SQL from{failure}")
    keys: Sequence[str] = (output_key,) if output_key else DEFAULT_OUTPUT_KEYS
    for key in keys:
        if key in outputs:
            return _as_sql_text(outputs[key], f"run.outputs[{key!r}]")
    raise ValueError(
        f"run.outputs has none of the keys {list(keys)} (it has {sorted(outputs)}); "
        "pass output_key=... to say where the generated SQL is"
    )


def _as_sql_text(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"{where} must be SQL text, got {type(value).__name__}")
    return strip_fences(value)


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
    raise ValueError(
        f"SQLExecutionEvaluator needs a reference ({where}): example.outputs['sql'] (a query) "
        "or example.outputs['expected_rows'] (a list of rows)"
    )


def _expected_rows(rows: Any, columns: Any) -> Reference:
    if not isinstance(rows, (list, tuple)):
        raise TypeError(f"example.outputs['expected_rows'] must be a list of rows, got {type(rows).__name__}")
    names = _column_names(columns)
    if rows and all(isinstance(row, dict) for row in rows):
        names = names or tuple(str(key) for key in rows[0])
        return Reference(rows=[_dict_row(row, names, i) for i, row in enumerate(rows)], columns=names)
    normalized = []
    for index, row in enumerate(rows):
        if not isinstance(row, (list, tuple)):
            raise TypeError(
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
        raise TypeError("example.outputs['expected_columns'] must be a list of column names")
    return tuple(columns)


def _dict_row(row: dict[str, Any], names: tuple[str, ...], index: int) -> Row:
    missing = [name for name in names if name not in row]
    if missing or len(row) != len(names):
        raise ValueError(
            f"example.outputs['expected_rows'][{index}] has keys {sorted(row)}, expected {list(names)}"
        )
    return normalize_row(row[name] for name in names)


def _check_width(rows: list[Row], names: tuple[str, ...] | None) -> None:
    width = len(names) if names is not None else (len(rows[0]) if rows else None)
    for index, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(
                f"example.outputs['expected_rows'][{index}] has {len(row)} values, expected {width}"
            )
