"""Any JSON value as a tree of display nodes: lists of records become tables, mappings
become key/value lists, long text becomes a block. Templates render the nodes; Jinja
escapes every piece of text, so nothing here produces markup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeGuard

import orjson

from assay.ui.reading.code import Code, code_of

__all__ = [
    "Items",
    "MAX_COLUMNS",
    "MAX_DEPTH",
    "MAX_TABLE_ROWS",
    "MAX_TEXT",
    "Mapping",
    "Node",
    "PASS_FLAGS",
    "SHORT_TEXT",
    "Table",
    "TableRow",
    "Text",
    "format_number",
    "row_status",
    "score_class",
    "traceback_of",
    "view",
    "without_traceback",
    "shown_metadata",
    "judge_call_of",
    "JudgeCall",
]


MAX_DEPTH = 6
MAX_TABLE_ROWS = 200
MAX_COLUMNS = 30
MAX_TEXT = 20_000
SHORT_TEXT = 120

PASS_FLAGS = (
    "passed",
    "pass",
    "success",
    "execution_success",
    "ok",
    "correct",
    "is_correct",
    "match",
)
"""Record fields whose False marks a failing row (a test case, a compared row...)."""


@dataclass
class Text:
    text: str
    kind: str  # null | bool | number | string | block | code
    code: Code | None = None  # for kind "code": the code and its language


@dataclass
class Mapping:
    items: list[tuple[str, Node]]


@dataclass
class TableRow:
    cells: list[Node]
    status: str | None = None  # good | bad | None


@dataclass
class Table:
    columns: list[str]
    rows: list[TableRow]
    hidden_rows: int = 0


@dataclass
class Items:
    items: list[Node] = field(default_factory=list)


Node = Text | Mapping | Table | Items


def view(value: Any, depth: int = 0, key: str | None = None) -> Node:
    """The display tree of a JSON value (``key``: the name it was stored under, if any)."""
    if isinstance(value, dict):
        return _mapping(value, depth)
    if isinstance(value, list):
        return _sequence(value, depth, columns=None)
    return _scalar(value, key)


def _scalar(value: Any, key: str | None = None) -> Text:
    if value is None:
        return Text("null", "null")
    if isinstance(value, bool):
        return Text("true" if value else "false", "bool")
    if isinstance(value, (int, float)):
        return Text(format_number(value), "number")
    text = value if isinstance(value, str) else str(value)
    if text == "":
        return Text("empty string", "empty")  # shown as what it is, never a blank cell
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"\n… ({len(text) - MAX_TEXT} more characters: see the JSON API)"
    long = "\n" in text or len(text) > SHORT_TEXT
    code = code_of(text, key) if long else None
    if code is not None:
        return Text(text, "code", code)
    return Text(text, "block" if long else "string")


def _compact(value: Any) -> Text:
    flat = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    if len(flat) <= SHORT_TEXT:
        if isinstance(value, list):  # items apart by ", " (a comma inside a string stays as it is)
            flat = (
                "["
                + ", ".join(orjson.dumps(item, option=orjson.OPT_NON_STR_KEYS).decode() for item in value)
                + "]"
            )
        return Text(flat, "string")
    text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_INDENT_2).decode()
    return _scalar(text) if len(text) > SHORT_TEXT else Text(text, "string")


def _mapping(value: dict[Any, Any], depth: int) -> Node:
    if depth >= MAX_DEPTH:
        return _compact(value)
    columns = value.get("columns")
    header = [str(c) for c in columns] if _is_str_list(columns) else None
    items: list[tuple[str, Node]] = []
    for key, item in value.items():
        if isinstance(item, list):
            items.append((str(key), _sequence(item, depth + 1, columns=header)))
        else:
            items.append((str(key), view(item, depth + 1, str(key))))
    return Mapping(items)


def _sequence(value: list[Any], depth: int, columns: list[str] | None) -> Node:
    if depth >= MAX_DEPTH:
        return _compact(value)
    if value and all(isinstance(item, dict) for item in value):
        return _records_table(value, depth)
    if value and all(_is_short_scalar(item) for item in value):  # [1, 5, 2] reads as a list
        return (
            _compact(value)
            if len(value) <= SHORT_LIST
            else Items([view(i, depth + 1) for i in value[:MAX_TABLE_ROWS]])
        )
    if value and columns and all(_is_row(item, len(columns)) for item in value):
        shown = value[:MAX_TABLE_ROWS]
        rows = [TableRow([view(cell, depth + 1) for cell in item]) for item in shown]
        return Table(columns, rows, max(len(value) - MAX_TABLE_ROWS, 0))
    return Items([view(item, depth + 1) for item in value[:MAX_TABLE_ROWS]])


def _records_table(records: list[dict[Any, Any]], depth: int) -> Table:
    columns: list[str] = []
    for record in records[:MAX_TABLE_ROWS]:
        for key in record:
            if str(key) not in columns and len(columns) < MAX_COLUMNS:
                columns.append(str(key))
    rows = []
    for record in records[:MAX_TABLE_ROWS]:
        by_name = {str(k): v for k, v in record.items()}
        cells = [view(by_name[c], depth + 1, c) if c in by_name else Text("", "null") for c in columns]
        rows.append(TableRow(cells, row_status(by_name)))
    return Table(columns, rows, max(len(records) - MAX_TABLE_ROWS, 0))


def row_status(record: dict[str, Any]) -> str | None:
    """``bad`` when a pass flag is False or expected and actual outputs differ."""
    flags = [record[name] for name in PASS_FLAGS if isinstance(record.get(name), bool)]
    mismatch = (
        "expected_output" in record
        and "actual_output" in record
        and record["expected_output"] != record["actual_output"]
    )
    if mismatch or (flags and not all(flags)):
        return "bad"
    return "good" if flags else None


SHORT_LIST = 20


def _is_short_scalar(value: Any) -> bool:
    return (
        value is None
        or isinstance(value, (bool, int, float))
        or (isinstance(value, str) and len(value) <= 40 and "\n" not in value)
    )


def _is_str_list(value: Any) -> TypeGuard[list[str]]:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def _is_row(value: Any, width: int) -> bool:
    return isinstance(value, (list, tuple)) and len(value) == width


def format_number(value: float | None, digits: int = 3) -> str:
    """Integers as integers, other numbers with up to ``digits`` decimals."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    if abs(value) >= 1e6 or abs(value) < 10**-digits:
        return f"{value:.{digits}g}"
    return f"{value:.{digits}f}".rstrip("0").rstrip(".")


def format_p_value(value: float | None) -> str:
    """A p-value with two significant digits; tiny ones as a bound."""
    if value is None:
        return "—"
    return "<0.0001" if value < 1e-4 else f"{value:.2g}"


def score_class(score: float | None, error: str | None = None) -> str:
    """A colour class: ``sc-err`` for errors, ``sc-0``..``sc-10`` on [0, 1], else neutral."""
    if error is not None:
        return "sc-err"
    if score is None:
        return "sc-none"
    if 0 <= score <= 1:
        return f"sc-{round(score * 10)}"
    return "sc-na"


def without_traceback(metadata: Any) -> Any:
    """Metadata minus the traceback, which the page shows with the error instead."""
    if isinstance(metadata, dict) and "traceback" in metadata:
        return {k: v for k, v in metadata.items() if k != "traceback"}
    return metadata


def shown_metadata(metadata: Any, error: Any) -> Any:
    """Metadata minus what the row page shows apart: a failed result's traceback, and
    the judge's prompt and raw reply (``judge_call_of``)."""
    metadata = without_traceback(metadata) if error else metadata
    if isinstance(metadata, dict) and judge_call_of(metadata) is not None:
        return {k: v for k, v in metadata.items() if k != "judge_call"}
    return metadata


@dataclass(frozen=True)
class JudgeCall:
    prompt: str
    reply: str
    attempt: int
    cached: bool


def judge_call_of(metadata: Any) -> JudgeCall | None:
    """What a judge asked its model and the raw reply, as ``assay.llm.transcript`` keeps them."""
    call = metadata.get("judge_call") if isinstance(metadata, dict) else None
    if not isinstance(call, dict) or not isinstance(call.get("prompt"), str):
        return None
    attempt = call.get("attempt")
    return JudgeCall(
        prompt=call["prompt"],
        reply=str(call.get("reply", "")),
        attempt=attempt if isinstance(attempt, int) else 1,
        cached=call.get("cached") is True,
    )


def traceback_of(metadata: Any) -> str | None:
    if isinstance(metadata, dict) and isinstance(metadata.get("traceback"), str):
        return str(metadata["traceback"])
    return None
