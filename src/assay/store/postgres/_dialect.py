"""SQLite-flavoured SQL, as the store and the UI write it, rewritten for PostgreSQL.

The store's queries are written once, in SQLite's dialect; this module is the seam that
runs them on PostgreSQL. Statements are rewritten token by token outside string literals
(cached per statement text):

- ``?`` placeholders become ``%s`` (and a literal ``%`` becomes ``%%``);
- ``LIMIT ?`` takes SQLite's ``-1`` ("no limit") as ``NULL``;
- ``INSERT OR REPLACE INTO t`` becomes ``INSERT ... ON CONFLICT (key) DO UPDATE``;
- ``MAX(a, b)`` / ``MIN(a, b)`` (SQLite's scalar forms) become ``GREATEST`` / ``LEAST``;
- ``binary``, reserved in PostgreSQL, is quoted as a column name;
- ``rowid`` becomes ``id``: the queries use it on ``runs`` only, whose key that is (so
  PostgreSQL, too, sees that grouping by it determines the row's other columns).

What SQLite has and PostgreSQL lacks as functions (``sqlite_master``, ``json_extract``, ``TOTAL``, ``SUM``, ``MAX``
and ``MIN`` over booleans) is created in the database by the PostgreSQL schema (``COMPAT_SQL``),
so queries need no rewriting for them. Schema scripts go through :func:`ddl` for types.
"""

from __future__ import annotations

import functools
import re

__all__ = ["COMPAT_SQL", "ddl", "translate"]

# Primary keys of the tables written with INSERT OR REPLACE.
_CONFLICT_KEYS = {"meta": ("key",), "cache": ("namespace", "key")}

_TOKENS = re.compile(
    r"""
    (?P<literal>'(?:[^']|'')*')
  | (?P<quoted>"(?:[^"]|"")*")
  | (?P<placeholder>\?)
  | (?P<percent>%)
  | (?P<named>(?<!:):(?P<name>[A-Za-z_][A-Za-z0-9_]*))
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<other>[^'"?%:A-Za-z_]+|:)
    """,
    re.VERBOSE,
)


@functools.lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """``sql`` (SQLite dialect, ``?`` or ``:name`` parameters) for psycopg on PostgreSQL."""
    out: list[str] = []
    for match in _TOKENS.finditer(sql):
        kind, token = match.lastgroup, match.group()
        if kind == "placeholder":
            out.append("%s")
        elif kind == "percent":
            out.append("%%")
        elif kind == "literal":
            out.append(token.replace("%", "%%"))
        elif kind == "named":
            out.append(f"%({match.group('name')})s")
        elif kind == "word" and token.lower() == "binary":
            out.append('"binary"')
        elif kind == "word" and token.lower() == "rowid":
            out.append("id")
        else:
            out.append(token)
    text = "".join(out)
    text = _limit_minus_one(text)
    text = _two_argument_extremes(text)
    return _insert_or_replace(text)


_LIMIT = re.compile(r"\bLIMIT\s+%s", re.IGNORECASE)


def _limit_minus_one(sql: str) -> str:
    return _LIMIT.sub("LIMIT NULLIF(%s, -1)", sql)


_EXTREME = re.compile(r"\b(MAX|MIN)\s*\(", re.IGNORECASE)


def _two_argument_extremes(sql: str) -> str:
    """``MAX(a, b)`` is SQLite's scalar maximum; ``MAX(a)`` stays the aggregate."""
    result, start = [], 0
    for match in _EXTREME.finditer(sql):
        if match.start() < start:
            continue
        end = _closing(sql, match.end())
        if end is None or not _has_top_level_comma(sql[match.end() : end]):
            continue
        name = "GREATEST" if match.group(1).upper() == "MAX" else "LEAST"
        inner = _two_argument_extremes(sql[match.end() : end])
        result += [sql[start : match.start()], f"{name}(", inner, ")"]
        start = end + 1
    result.append(sql[start:])
    return "".join(result)


def _closing(sql: str, index: int) -> int | None:
    """The index of the ``)`` closing the parenthesis opened just before ``index``."""
    depth, quote = 1, ""
    for position in range(index, len(sql)):
        char = sql[position]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return position
    return None


def _has_top_level_comma(inner: str) -> bool:
    depth, quote = 0, ""
    for char in inner:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            return True
    return False


_REPLACE = re.compile(
    r"^\s*INSERT\s+OR\s+REPLACE\s+INTO\s+(\w+)\s*\(([^)]*)\)(.*)$", re.IGNORECASE | re.DOTALL
)


def _insert_or_replace(sql: str) -> str:
    match = _REPLACE.match(sql)
    if match is None:
        return sql
    table, columns, rest = match.group(1), match.group(2), match.group(3)
    keys = _CONFLICT_KEYS.get(table.lower())
    if keys is None:
        raise ValueError(f"INSERT OR REPLACE INTO {table}: its primary key is not known to the dialect")
    names = [column.strip() for column in columns.split(",")]
    updates = ", ".join(f"{name} = excluded.{name}" for name in names if name not in keys)
    action = f"DO UPDATE SET {updates}" if updates else "DO NOTHING"
    return (
        f"INSERT INTO {table} ({columns}){rest.rstrip().rstrip(';')} ON CONFLICT ({', '.join(keys)}) {action}"
    )


_TYPES = [
    (
        re.compile(r"\bINTEGER\s+PRIMARY\s+KEY\b", re.IGNORECASE),
        "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    ),
    (re.compile(r"\bINTEGER\b", re.IGNORECASE), "BIGINT"),
    (re.compile(r"\bREAL\b", re.IGNORECASE), "DOUBLE PRECISION"),
    (re.compile(r"\bBLOB\b", re.IGNORECASE), "BYTEA"),
    (re.compile(r"\bbinary\b"), '"binary"'),
]


def ddl(script: str) -> str:
    """A SQLite schema script with PostgreSQL's column types."""
    for pattern, replacement in _TYPES:
        script = pattern.sub(replacement, script)
    return script


COMPAT_SQL = r"""
-- SQLite's json_extract on JSON stored as text: a string comes back unquoted, anything
-- else as JSON text, a missing path as NULL.
CREATE OR REPLACE FUNCTION json_extract(doc TEXT, path TEXT) RETURNS TEXT
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE jsonb_typeof(v) WHEN 'string' THEN v #>> '{}' WHEN 'null' THEN NULL ELSE v::text END
    FROM (SELECT jsonb_path_query_first(doc::jsonb, path::jsonpath) AS v) AS found
$$;
-- SQLite's TOTAL: a float sum that is 0.0 over no rows; booleans count as 1 and 0.
CREATE OR REPLACE FUNCTION assay_total_step(acc DOUBLE PRECISION, x DOUBLE PRECISION)
RETURNS DOUBLE PRECISION LANGUAGE sql IMMUTABLE AS $$ SELECT acc + COALESCE(x, 0) $$;
CREATE OR REPLACE FUNCTION assay_total_step(acc DOUBLE PRECISION, x BOOLEAN)
RETURNS DOUBLE PRECISION LANGUAGE sql IMMUTABLE AS $$ SELECT acc + COALESCE(x::int, 0) $$;
CREATE OR REPLACE AGGREGATE total(DOUBLE PRECISION) (
    SFUNC = assay_total_step, STYPE = DOUBLE PRECISION, INITCOND = '0');
CREATE OR REPLACE AGGREGATE total(BOOLEAN) (
    SFUNC = assay_total_step, STYPE = DOUBLE PRECISION, INITCOND = '0');
-- MAX and MIN over a condition, as SQLite reads it (1 or 0).
CREATE OR REPLACE FUNCTION assay_bool_max(acc INTEGER, x BOOLEAN) RETURNS INTEGER
LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN x IS NULL THEN acc ELSE GREATEST(acc, x::int) END $$;
CREATE OR REPLACE FUNCTION assay_bool_min(acc INTEGER, x BOOLEAN) RETURNS INTEGER
LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN x IS NULL THEN acc ELSE LEAST(acc, x::int) END $$;
CREATE OR REPLACE FUNCTION assay_bool_sum(acc BIGINT, x BOOLEAN) RETURNS BIGINT
LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN x IS NULL THEN acc ELSE COALESCE(acc, 0) + x::int END $$;
CREATE OR REPLACE AGGREGATE max(BOOLEAN) (SFUNC = assay_bool_max, STYPE = INTEGER);
CREATE OR REPLACE AGGREGATE sum(BOOLEAN) (SFUNC = assay_bool_sum, STYPE = BIGINT);
-- Which tables exist, as SQLite's catalogue answers it.
CREATE OR REPLACE VIEW sqlite_master AS
    SELECT 'table'::text AS type, tablename::text AS name FROM pg_tables
    WHERE schemaname = current_schema();
CREATE OR REPLACE AGGREGATE min(BOOLEAN) (SFUNC = assay_bool_min, STYPE = INTEGER);
"""
