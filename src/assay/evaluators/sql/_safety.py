"""Static checks on SQL before anything runs: syntax, statement kind, risky patterns.

Parsed with sqlglot for the target dialect. A statement that is not a single
read-only query is *refused* (never executed); risky patterns (tautologies such
as ``OR 1=1``, comment truncation, sleep calls) are *flagged*. These checks are
the first line only: the database connection itself is read-only, so a query
the parser misreads still cannot write.
"""

from __future__ import annotations

import functools
import logging
import operator
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from assay.errors import require_extra
from assay.evaluators.sql._comments import scan_comments
from assay.evaluators.sql._refused import REFUSED_FUNCTIONS, RUN_QUERY_TEXT

try:
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ErrorLevel, ParseError, TokenError
except ImportError:  # exercised by tests/test_errors.py with sqlglot hidden
    require_extra("sqlglot", "sql", feature="the SQL evaluators")
    raise

# Functions that only waste time (the timeout stops them): flagged.
SLEEP_FUNCTIONS = frozenset({"pg_sleep", "pg_sleep_for", "pg_sleep_until", "sleep", "benchmark"})

# Longer SQL is refused unparsed: no model answer needs it, and parsing it would take seconds.
MAX_SQL_CHARS = 100_000
_CACHED_SQL_CHARS = 20_000

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_QUERY_KEYWORD = re.compile(r"^\s*\(*\s*(select|with|values)\b", re.IGNORECASE)


@dataclass(frozen=True)
class StaticReport:
    """What the parser says about one piece of SQL."""

    parsed: bool
    parse_error: str | None = None
    statement_count: int = 0
    kind: str | None = None  # "query", or the statement keyword: "DELETE", "DROP", ...
    refusal: str | None = None  # why it must not run; None when it may
    flags: tuple[str, ...] = ()
    ordered: bool = False  # the outermost query has an ORDER BY
    tables: tuple[str, ...] = ()

    def as_metadata(self) -> dict[str, Any]:
        return {
            "parsed": self.parsed,
            "parse_error": self.parse_error,
            "statement_count": self.statement_count,
            "kind": self.kind,
            "refusal": self.refusal,
            "flags": list(self.flags),
            "tables": list(self.tables),
        }


def check_dialect(dialect: str | None) -> str | None:
    """``dialect`` if sqlglot knows it; a ValueError naming the known ones otherwise."""
    if dialect is None:
        return None
    try:
        sqlglot.Dialect.get_or_raise(dialect)
    except ValueError as exc:
        raise ValueError(f"unknown SQL dialect {dialect!r}: {exc}") from None
    return dialect


def analyze_sql(sql: str, dialect: str | None = None) -> StaticReport:
    """Parse ``sql`` and decide whether it is a single read-only query."""
    if len(sql) > MAX_SQL_CHARS:
        return StaticReport(
            parsed=False,
            parse_error=f"SQL text of {len(sql):,} characters (more than {MAX_SQL_CHARS:,})",
            refusal=f"SQL text longer than {MAX_SQL_CHARS:,} characters",
            flags=("oversized",),
        )
    if len(sql) > _CACHED_SQL_CHARS:
        return _analyze(sql, dialect)
    return _analyze_cached(sql, dialect)


def _analyze(sql: str, dialect: str | None) -> StaticReport:
    comments = scan_comments(sql, dialect)
    text_flags = ["comment_truncation"] if comments.truncation else []
    try:
        with _sqlglot_quiet():
            parsed = sqlglot.parse(sql, read=dialect, error_level=ErrorLevel.RAISE)
        statements = [statement for statement in parsed if statement is not None]
    except (ParseError, TokenError) as exc:
        return StaticReport(parsed=False, parse_error=_clean(exc), flags=tuple(text_flags))
    except Exception as exc:  # untrusted text may trip the parser itself (RecursionError...)
        problem = f"the parser failed ({type(exc).__name__}: {_clean(exc)})"
        return StaticReport(parsed=False, parse_error=problem, flags=tuple(text_flags))
    if not statements:
        return StaticReport(parsed=False, parse_error="no SQL statement found", flags=tuple(text_flags))
    return _classify(statements, text_flags)


# References repeat across runs and repetitions; short texts only, to bound the cache's memory.
_analyze_cached = functools.lru_cache(maxsize=4096)(_analyze)


@contextmanager
def _sqlglot_quiet() -> Iterator[None]:
    """Silence sqlglot's "falling back to Command" warnings for this thread's parse only."""
    _QUIET.active = True
    try:
        yield
    finally:
        _QUIET.active = False


class _QuietFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(_QUIET, "active", False)


_QUIET = threading.local()
logging.getLogger("sqlglot").addFilter(_QuietFilter())


def _clean(exc: Exception) -> str:
    message = _ANSI.sub("", str(exc)).strip()
    return message.splitlines()[0] if message else type(exc).__name__


def _classify(statements: list[exp.Expr], text_flags: list[str]) -> StaticReport:
    flags = list(text_flags)
    for statement in statements:
        flags.extend(_pattern_flags(statement))
    root = statements[0]
    kind, refusal, kind_flags = _statement_kind(root)
    flags.extend(kind_flags)
    if len(statements) > 1:
        flags.append("stacked_statements")
        kinds = ", ".join(_statement_kind(s)[0] or "?" for s in statements)
        refusal = f"several statements ({len(statements)}: {kinds}); only a single query may run"
    if kind == "unparsed":
        return StaticReport(
            parsed=False,
            parse_error="the parser could not read this query (left to the database)",
            statement_count=len(statements),
            refusal=refusal,
            flags=tuple(_unique(flags)),
        )
    if refusal is None and kind == "query":
        refusal, query_flags = _query_refusal(root)
        flags.extend(query_flags)
    return StaticReport(
        parsed=True,
        statement_count=len(statements),
        kind=kind,
        refusal=refusal,
        flags=tuple(_unique(flags)),
        ordered=kind == "query" and _has_top_level_order(root),
        tables=tuple(_unique(_table_names(root))),
    )


def _statement_kind(root: exp.Expr) -> tuple[str, str | None, list[str]]:
    """(kind, refusal, flags) for a statement's root node."""
    if isinstance(root, (exp.Query, exp.Values)):
        return "query", None, []
    if isinstance(root, exp.Command) and _QUERY_KEYWORD.match(root.sql()):
        return "unparsed", None, []  # sqlglot gave up on a query: the database decides
    keyword = _keyword(root)
    family = _family(root)
    reason = {
        "dml": f"{keyword} statement (DML) would modify data",
        "ddl": f"{keyword} statement (DDL) would change the schema",
        "pragma": "PRAGMA statement (may change database settings)",
        "attach": f"{keyword} statement (opens or detaches other database files)",
        "transaction_control": f"{keyword} statement (transaction control)",
        "session_setting": f"{keyword} statement (changes session settings)",
    }.get(family, f"{keyword} statement is not a read-only query")
    return keyword, reason, [family]


def _keyword(root: exp.Expr) -> str:
    """The statement's leading keyword as written back by sqlglot (``DROP``, ``PRAGMA``...)."""
    if isinstance(root, exp.Command):
        return str(root.this).upper()
    words = root.sql().split(maxsplit=1)
    return words[0].upper() if words else type(root).__name__.upper()


def _family(node: exp.Expr) -> str:
    if isinstance(node, exp.DML):
        return "dml"
    if isinstance(node, (exp.DDL, exp.Create, exp.Drop, exp.Alter, exp.TruncateTable)):
        return "ddl"
    if isinstance(node, exp.Pragma):
        return "pragma"
    if isinstance(node, (exp.Attach, exp.Detach)):
        return "attach"
    if isinstance(node, (exp.Transaction, exp.Commit, exp.Rollback)):
        return "transaction_control"
    if isinstance(node, exp.Set):
        return "session_setting"
    return "not_a_query"


def _query_refusal(root: exp.Expr) -> tuple[str | None, list[str]]:
    """Refusal and flags for things inside a query that write, lock or reach outside."""
    for node in root.walk():
        if isinstance(node, (exp.DML, exp.DDL, exp.Create, exp.Drop, exp.Alter)) and node is not root:
            family = _family(node)
            return f"{_keyword(node)} inside the query would modify the database", [family]
        if isinstance(node, exp.Select) and node.args.get("into"):
            return "SELECT ... INTO creates a table", ["select_into"]
        if isinstance(node, exp.Lock):
            return "FOR UPDATE/SHARE takes row locks", ["row_locking"]
        if isinstance(node, exp.Func) and _function_name(node) in REFUSED_FUNCTIONS:
            name = _function_name(node)
            if name in RUN_QUERY_TEXT:
                return f"function {name}() runs SQL given as text", ["query_text_function"]
            return f"function {name}() has side effects or reads server files", ["side_effect_function"]
    return None, []


def _pattern_flags(statement: exp.Expr) -> list[str]:
    flags = []
    for node in statement.walk():
        if isinstance(node, exp.Or) and (_always_true(node.this) or _always_true(node.expression)):
            flags.append("tautology")
        elif isinstance(node, exp.Func) and _function_name(node) in SLEEP_FUNCTIONS:
            flags.append("sleep_function")
    return flags


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return str(node.sql_name()).lower()


_OPERATORS: dict[type[exp.Expr], Callable[[Any, Any], Any]] = {
    exp.EQ: operator.eq,
    exp.NEQ: operator.ne,
    exp.GT: operator.gt,
    exp.GTE: operator.ge,
    exp.LT: operator.lt,
    exp.LTE: operator.le,
}
_COMPARISONS = tuple(_OPERATORS)


def _always_true(node: exp.Expr) -> bool:
    """Constant-true conditions: ``1=1``, ``'a'='a'``, ``2>1``, ``TRUE``, ``x=x``, ``NOT 1=2``."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Boolean):
        return node.this is True
    if isinstance(node, exp.Literal) and not node.is_string:
        return _number(node) not in (None, 0.0)
    if isinstance(node, exp.Not):
        return _always_false(node.this)
    if isinstance(node, exp.Or):
        return _always_true(node.this) or _always_true(node.expression)
    if isinstance(node, _COMPARISONS):
        return _constant_comparison(node) is True
    return False


def _always_false(node: exp.Expr) -> bool:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Boolean):
        return node.this is False
    if isinstance(node, _COMPARISONS):
        return _constant_comparison(node) is False
    return False


def _constant_comparison(node: exp.Expr) -> bool | None:
    left, right = node.this, node.expression
    if left == right and not isinstance(left, exp.Null):
        return isinstance(node, (exp.EQ, exp.GTE, exp.LTE))
    if not (isinstance(left, exp.Literal) and isinstance(right, exp.Literal)):
        return None
    if left.is_string != right.is_string:
        return None
    a: Any = left.this if left.is_string else _number(left)
    b: Any = right.this if right.is_string else _number(right)
    if a is None or b is None:
        return None
    return bool(_OPERATORS[type(node)](a, b))


def _number(literal: exp.Literal) -> float | None:
    try:
        return float(literal.this)
    except (TypeError, ValueError):
        return None


def _has_top_level_order(root: exp.Expr) -> bool:
    while isinstance(root, exp.Subquery) and not root.args.get("order"):
        root = root.this
    return bool(root.args.get("order"))


def _table_names(root: exp.Expr) -> list[str]:
    cte_names = {cte.alias_or_name.lower() for cte in root.find_all(exp.CTE)}
    return [
        table.name for table in root.find_all(exp.Table) if table.name and table.name.lower() not in cte_names
    ]


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
