"""Static checks: what is refused before execution, and which patterns are flagged."""

from __future__ import annotations

import logging

import pytest

from assay.evaluators.sql._comments import scan_comments
from assay.evaluators.sql._safety import analyze_sql, check_dialect


@pytest.mark.parametrize(
    ("sql", "dialect", "flag"),
    [
        ("DROP TABLE orders", "sqlite", "ddl"),
        ("CREATE TABLE x (a INT)", "sqlite", "ddl"),
        ("ALTER TABLE orders ADD COLUMN note TEXT", "sqlite", "ddl"),
        ("DELETE FROM orders", "sqlite", "dml"),
        ("UPDATE products SET price = 0", "sqlite", "dml"),
        ("INSERT INTO categories VALUES (99, 'x')", "sqlite", "dml"),
        ("PRAGMA journal_mode = WAL", "sqlite", "pragma"),
        ("PRAGMA user_version = 7", "sqlite", "pragma"),
        ("ATTACH DATABASE '/tmp/other.db' AS other", "sqlite", "attach"),
        ("DETACH other", "sqlite", "attach"),
        ("BEGIN", "sqlite", "transaction_control"),
        ("SET statement_timeout = 0", "postgres", "session_setting"),
        ("TRUNCATE TABLE orders", "postgres", "ddl"),
        ("COPY orders TO PROGRAM 'cat'", "postgres", "dml"),
        ("VACUUM INTO '/tmp/copy.db'", "sqlite", "not_a_query"),
        ("EXPLAIN SELECT 1", "sqlite", "not_a_query"),
        ("DO $$ BEGIN END $$", "postgres", "not_a_query"),
    ],
)
def test_statements_that_are_not_read_only_queries_are_refused(sql: str, dialect: str, flag: str) -> None:
    report = analyze_sql(sql, dialect)
    assert report.refusal is not None
    assert flag in report.flags


def test_stacked_statements_are_refused_and_flagged() -> None:
    report = analyze_sql("SELECT * FROM orders; DROP TABLE orders", "sqlite")
    assert report.statement_count == 2
    assert "stacked_statements" in report.flags
    assert report.refusal is not None and "several statements" in report.refusal


def test_a_trailing_semicolon_is_one_statement() -> None:
    report = analyze_sql("SELECT 1;", "sqlite")
    assert report.statement_count == 1 and report.refusal is None


@pytest.mark.parametrize(
    ("sql", "flag"),
    [
        ("WITH gone AS (DELETE FROM orders RETURNING *) SELECT * FROM gone", "dml"),
        ("SELECT * INTO backup FROM orders", "select_into"),
        ("SELECT * FROM orders FOR UPDATE", "row_locking"),
        ("SELECT pg_read_file('/etc/passwd')", "side_effect_function"),
        ("SELECT set_config('default_transaction_read_only', 'off', false)", "side_effect_function"),
        ("SELECT query_to_xml('DELETE FROM orders', true, false, '')", "query_text_function"),
        (
            "SELECT * FROM ts_stat('SELECT to_tsvector(pg_read_file(''/etc/hostname''))')",
            "query_text_function",
        ),
        ("SELECT pg_catalog.pg_advisory_lock_shared(1)", "side_effect_function"),
        ("SELECT pg_create_physical_replication_slot('s')", "side_effect_function"),
        ("SELECT pg_stat_reset()", "side_effect_function"),
    ],
)
def test_writes_hidden_inside_a_query_are_refused(sql: str, flag: str) -> None:
    report = analyze_sql(sql, "postgres")
    assert report.kind == "query"
    assert report.refusal is not None and flag in report.flags


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM customers WHERE name = 'x' OR 1=1",
        "SELECT * FROM customers WHERE name = 'x' OR 'a'='a'",
        "SELECT * FROM customers WHERE id = 3 OR (2 > 1)",
        "SELECT * FROM customers WHERE id = 3 OR TRUE",
        "SELECT * FROM customers WHERE id = 3 OR id = id",
        "SELECT * FROM customers WHERE id = 3 OR NOT 1 = 2",
    ],
)
def test_or_tautologies_are_flagged_but_not_refused(sql: str) -> None:
    report = analyze_sql(sql, "sqlite")
    assert "tautology" in report.flags
    assert report.refusal is None


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM customers WHERE 1=1 AND country = 'France'",
        "SELECT * FROM customers WHERE id = 3 OR id = 4",
        "SELECT * FROM customers WHERE id = 3 OR 1 = 2",
    ],
)
def test_ordinary_conditions_are_not_tautologies(sql: str) -> None:
    assert "tautology" not in analyze_sql(sql, "sqlite").flags


@pytest.mark.parametrize(
    ("sql", "truncated"),
    [
        ("SELECT * FROM users WHERE name = 'admin'--' AND password = 'x'", True),
        ("SELECT * FROM users WHERE name = 'admin'-- AND password = 'x'", True),
        ("SELECT * FROM users WHERE name = 'admin' /* unterminated", True),
        ("SELECT * FROM users -- the users table", False),
        ("SELECT '--not a comment' AS text", False),
        ("SELECT 'it''s' -- fine", False),
        ('SELECT "we--ird" FROM t', False),
    ],
)
def test_comment_truncation_is_flagged(sql: str, truncated: bool) -> None:
    assert ("comment_truncation" in analyze_sql(sql, "sqlite").flags) is truncated


def test_comment_scanner_knows_postgres_dollar_quotes_and_nesting() -> None:
    assert scan_comments("SELECT $$ -- ' $$", "postgres").comment_count == 0
    nested = scan_comments("SELECT 1 /* a /* b */ c */", "postgres")
    assert nested.comment_count == 1 and not nested.unterminated_block
    assert scan_comments("SELECT E'\\'' -- x", "postgres").comment_count == 1


def test_sleep_functions_are_flagged() -> None:
    report = analyze_sql("SELECT pg_sleep(10)", "postgres")
    assert "sleep_function" in report.flags and report.refusal is None


def test_order_by_of_the_outermost_query_is_detected() -> None:
    assert analyze_sql("SELECT name FROM customers ORDER BY name", "sqlite").ordered
    assert analyze_sql("SELECT 1 UNION SELECT 2 ORDER BY 1", "sqlite").ordered
    assert analyze_sql("(SELECT name FROM customers ORDER BY name)", "sqlite").ordered
    assert not analyze_sql("SELECT * FROM (SELECT name FROM customers ORDER BY name)", "sqlite").ordered
    assert not analyze_sql("SELECT name FROM customers", "sqlite").ordered


def test_syntax_errors_are_reported_with_the_parser_message() -> None:
    report = analyze_sql("SELECT name FROM customers WHERE", "sqlite")
    assert not report.parsed
    assert report.parse_error and "\x1b" not in report.parse_error
    assert not analyze_sql("", "sqlite").parsed


def test_tables_exclude_cte_names() -> None:
    report = analyze_sql("WITH big AS (SELECT * FROM orders) SELECT * FROM big JOIN customers", "sqlite")
    assert set(report.tables) == {"orders", "customers"}


def test_parser_fallback_warnings_stay_quiet(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="sqlglot"):
        report = analyze_sql("EXPLAIN SELECT 1", "sqlite")
    assert report.refusal is not None
    assert not caplog.records


def test_unknown_dialect_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown SQL dialect 'sqlyte'"):
        check_dialect("sqlyte")
    assert check_dialect("postgres") == "postgres"


def test_oversized_sql_is_refused_without_parsing() -> None:
    report = analyze_sql("SELECT 1 FROM t WHERE " + " OR ".join(["a = 1"] * 20_000), "sqlite")
    assert report.refusal and "longer than 100,000 characters" in report.refusal
    assert report.flags == ("oversized",)


def test_parser_crashes_become_parse_errors() -> None:
    report = analyze_sql("SELECT " + "(" * 5000 + "1" + ")" * 5000, "sqlite")
    assert not report.parsed and "RecursionError" in (report.parse_error or "")
