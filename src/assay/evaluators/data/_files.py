"""The files of a data-transformation example (in), and the table a script wrote (out).

Input files come from ``example.inputs["input_files"]``: ``{name: content}`` where the
content is text, rows (a list of objects: written as CSV, JSON or JSONL by the name's
extension), ``{"path": "/host/file"}`` (refused over the evaluator service) or
``{"base64": "..."}``. Output files are parsed
here, in the trusted parent, with the standard library only; a Parquet output is turned
into plain rows inside the sandbox (so no binary parser of ours reads untrusted bytes).
"""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import posixpath
import re
from dataclasses import dataclass
from typing import Any

from assay.errors import EvaluatorInputError
from assay.evaluators.host_files import refuse_if_remote

FORMATS = (".csv", ".json", ".jsonl", ".parquet")
MAX_INPUT_BYTES = 32 * 1024 * 1024
#: rows x columns of a table made from row objects: distinct keys in every row would
#: otherwise fill rows x keys cells (13,000 such rows, 190 KB: 169 million cells)
MAX_CELLS = 4_000_000


class _OutputError(ValueError):
    """The script's output cannot be read as a table."""


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    types: tuple[str, ...] | None = None  # declared by the format (Parquet), if any


def check_name(name: Any, where: str) -> str:
    """A plain relative file name: no folders above the work dir, no absolute paths."""
    if not isinstance(name, str) or not name.strip():
        raise EvaluatorInputError(f"{where}: a file name must be a non-empty string")
    normal = posixpath.normpath(name)
    if name.startswith("/") or normal.startswith("..") or "\x00" in name:
        raise EvaluatorInputError(f"{where}: {name!r} must be a relative path inside the work folder")
    return normal


def format_of(name: str, where: str) -> str:
    extension = posixpath.splitext(name)[1].lower()
    if extension not in FORMATS:
        raise EvaluatorInputError(f"{where}: {name!r} has no known format ({', '.join(FORMATS)})")
    return extension


def input_files(inputs: dict[str, Any], field: str = "input_files") -> dict[str, bytes]:
    raw = inputs.get(field)
    if not isinstance(raw, dict) or not raw:
        raise EvaluatorInputError(f"example.inputs[{field!r}] must map file names to contents")
    files: dict[str, bytes] = {}
    for name, content in raw.items():
        where = f"example.inputs[{field!r}][{name!r}]"
        files[check_name(name, where)] = _content(name, content, where)
    total = sum(len(data) for data in files.values())
    if total > MAX_INPUT_BYTES:
        raise EvaluatorInputError(
            f"example.inputs[{field!r}]: {total} bytes is over the {MAX_INPUT_BYTES}-byte limit"
        )
    return files


def _content(name: str, content: Any, where: str) -> bytes:
    if isinstance(content, str):
        return content.encode()
    if isinstance(content, dict) and set(content) == {"path"}:
        refuse_if_remote(where)
        path = content["path"]
        if not isinstance(path, str) or not os.path.isfile(path):
            raise EvaluatorInputError(f"{where}: the input file {path!r} does not exist")
        with open(path, "rb") as handle:
            return handle.read()
    if isinstance(content, dict) and set(content) == {"base64"}:
        try:
            return base64.b64decode(content["base64"], validate=True)
        except (ValueError, TypeError) as exc:
            raise EvaluatorInputError(f"{where}: not valid base64 ({exc})") from None
    extension = posixpath.splitext(name)[1].lower()
    if isinstance(content, list) and extension == ".csv":
        return _rows_as_csv(content, where)
    if isinstance(content, list) and extension == ".jsonl":
        return "".join(json.dumps(row) + "\n" for row in content).encode()
    if extension == ".json":
        return json.dumps(content).encode()
    raise EvaluatorInputError(f"{where}: give text, rows, {{'path': ...}} or {{'base64': ...}}")


def _rows_as_csv(rows: list[Any], where: str) -> bytes:
    if not all(isinstance(row, dict) for row in rows):
        raise EvaluatorInputError(f"{where}: rows for a CSV file must be objects")
    columns = list(dict.fromkeys(key for row in rows for key in row))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue().encode()


def expected_table(value: Any, where: str) -> Table:
    """Expected rows: a list of objects, or ``{"columns": [...], "rows": [[...]]}``."""
    if isinstance(value, dict) and "columns" in value and "rows" in value:
        columns, rows = value["columns"], value["rows"]
        if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
            raise EvaluatorInputError(f"{where}['columns'] must be a list of names")
        if not isinstance(rows, list) or not all(
            isinstance(r, list) and len(r) == len(columns) for r in rows
        ):
            raise EvaluatorInputError(f"{where}['rows'] must be lists of {len(columns)} values")
        return Table(tuple(columns), [tuple(r) for r in rows])
    if isinstance(value, list) and all(isinstance(row, dict) for row in value):
        return table_of_objects(value)
    raise EvaluatorInputError(f"{where} must be a list of row objects or {{'columns', 'rows'}}")


class _TableTooLarge(_OutputError):
    """Rows x columns over ``MAX_CELLS``."""


def table_of_objects(rows: list[dict[str, Any]]) -> Table:
    columns = tuple(dict.fromkeys(str(key) for row in rows for key in row))
    if len(rows) * len(columns) > MAX_CELLS:
        raise _TableTooLarge(
            f"{len(rows)} rows x {len(columns)} columns (the union of the rows' keys) is over "
            f"the {MAX_CELLS}-cell limit; rows should share their keys"
        )
    return Table(columns, [tuple(row.get(c) for c in columns) for row in rows])


def parse_output(data: bytes, extension: str) -> Table:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _OutputError(f"the output is not UTF-8 text ({exc})") from None
    if extension == ".csv":
        return _csv_table(text)
    if extension == ".jsonl":
        rows = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                rows.append(_json(line, f"line {number}"))
        return _objects(rows)
    if extension == ".json":
        value = _json(text, "the output")
        if isinstance(value, dict) and "columns" in value and "rows" in value:
            return expected_table(value, "the output")
        return _objects(value if isinstance(value, list) else [value])
    table = _json(text, "the Parquet rows")  # converted to JSON in the sandbox
    if not isinstance(table, dict):
        raise _OutputError("the Parquet output could not be read")
    return Table(
        tuple(map(str, table.get("columns") or [])),
        [tuple(row) for row in table.get("rows") or []],
        tuple(map(str, table.get("types") or [])) or None,
    )


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise _OutputError(f"{where} is not valid JSON ({exc})") from None


def _objects(rows: list[Any]) -> Table:
    if not all(isinstance(row, dict) for row in rows):
        raise _OutputError("the output must hold one object per row")
    return table_of_objects(rows)


def _csv_table(text: str) -> Table:
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise _OutputError("the CSV output is empty (no header)") from None
    except csv.Error as exc:
        raise _OutputError(f"the CSV output cannot be parsed: {exc}") from None
    rows = []
    try:
        for number, row in enumerate(reader, start=2):
            if len(row) != len(header):
                raise _OutputError(f"CSV line {number} has {len(row)} fields, the header {len(header)}")
            rows.append(tuple(csv_cell(cell) for cell in row))
    except csv.Error as exc:
        raise _OutputError(f"the CSV output cannot be parsed: {exc}") from None
    return Table(tuple(header), rows)


INTEGER = re.compile(r"[+-]?[0-9]+")
DECIMAL = re.compile(r"[+-]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)?")


def csv_cell(text: str) -> Any:
    """CSV holds only text: an empty field (or NaN) is NULL, numbers are numbers,
    true/false are booleans; anything else stays text."""
    if text == "" or text in ("NaN", "nan"):
        return None
    if INTEGER.fullmatch(text):
        return int(text)
    if DECIMAL.fullmatch(text):
        return float(text)
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text
