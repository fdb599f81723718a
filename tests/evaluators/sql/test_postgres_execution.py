"""SQLExecutionEvaluator against a real PostgreSQL server (started by conftest, never mocked)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import pytest

from assay.evaluation import EvaluationResult
from assay.evaluators import SQLExecutionEvaluator
from assay.schemas import Example, Run

pytestmark = pytest.mark.slow  # the session starts a PostgreSQL server (a few seconds)


def evaluate(
    evaluator: SQLExecutionEvaluator, generated: str, reference: str | None = None, **outputs: Any
) -> EvaluationResult:
    if reference is not None:
        outputs["sql"] = reference
    result = evaluator.evaluate(Run(outputs={"sql": generated}), Example(outputs=outputs))
    assert isinstance(result, EvaluationResult)
    return result


@pytest.fixture(scope="module")
def pg(shop_postgres: str) -> Iterator[SQLExecutionEvaluator]:
    with SQLExecutionEvaluator(shop_postgres, timeout=2) as evaluator:
        yield evaluator


def test_dialect_follows_the_url(pg: SQLExecutionEvaluator) -> None:
    assert pg.dialect == "postgres"
    assert "postgresql+psycopg://" in pg.database.description


@pytest.mark.parametrize(
    ("reference", "generated"),
    [
        (
            "SELECT DISTINCT c.id, c.name FROM customers c JOIN orders o ON o.customer_id = c.id WHERE o.status = 'cancelled'",
            "SELECT id, name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE status = 'cancelled')",
        ),
        (
            "SELECT country, COUNT(*) FROM customers GROUP BY country",
            "SELECT COUNT(*)::float8 AS n, country FROM customers GROUP BY 2",
        ),
        (
            "SELECT c.name, SUM(i.quantity * i.unit_price * (1 - i.discount)) FROM order_items i "
            "JOIN products p ON p.id = i.product_id JOIN categories c ON c.id = p.category_id GROUP BY c.name",
            "SELECT c.name, (SUM(i.quantity * i.unit_price) - SUM(i.quantity * i.unit_price * i.discount))::float8 "
            "FROM categories c JOIN products p ON p.category_id = c.id JOIN order_items i ON i.product_id = p.id GROUP BY c.id, c.name",
        ),
        (
            "SELECT id, signup_date FROM customers WHERE signup_date >= DATE '2022-06-01'",
            "SELECT id, signup_date FROM customers WHERE EXTRACT(YEAR FROM signup_date) * 100 + EXTRACT(MONTH FROM signup_date) >= 202206",
        ),
    ],
)
def test_equivalent_queries_score_1(pg: SQLExecutionEvaluator, reference: str, generated: str) -> None:
    result = evaluate(pg, generated, reference)
    assert (result.score, result.value) == (1, "match"), (result.comment, result.error)


def test_numeric_decimals_match_float_expected_rows(pg: SQLExecutionEvaluator) -> None:
    """NUMERIC comes back as Decimal; expected rows written as JSON floats still match."""
    sql = "SELECT id, price FROM products WHERE id <= 2"
    rows = evaluate(pg, sql, "SELECT id, price FROM products WHERE id <= 2").metadata["generated"]["rows"]
    result = evaluate(pg, sql, expected_rows=[[r[0], float(r[1])] for r in rows])
    assert result.score == 1


def test_wrong_answers_and_order(pg: SQLExecutionEvaluator) -> None:
    assert (
        evaluate(pg, "SELECT COUNT(*) FROM orders", "SELECT COUNT(DISTINCT customer_id) FROM orders").score
        == 0
    )
    ordered = "SELECT id FROM products ORDER BY price DESC, id"
    assert evaluate(pg, "SELECT id FROM products ORDER BY price, id", ordered).score == 0
    assert evaluate(pg, "SELECT id FROM products", "SELECT id FROM products ORDER BY id DESC").score == 0
    assert evaluate(pg, "SELECT id FROM products ORDER BY id", "SELECT id FROM products").score == 1


def test_empty_result_keeps_its_columns(pg: SQLExecutionEvaluator) -> None:
    result = evaluate(
        pg, "SELECT id, name FROM customers WHERE false", "SELECT id FROM customers WHERE false"
    )
    assert result.score == 0 and "column count differs" in (result.comment or "")
    assert result.metadata["generated"]["columns"] == ["id", "name"]


def test_syntax_and_execution_errors(pg: SQLExecutionEvaluator) -> None:
    syntax = evaluate(pg, "SELEC id FROM customers", "SELECT id FROM customers")
    assert (syntax.score, syntax.value) == (0, "syntax_error") and "syntax error" in syntax.metadata["error"]
    missing = evaluate(pg, "SELECT * FROM clients", "SELECT id FROM customers")
    assert (missing.score, missing.value) == (0, "execution_error")
    assert 'relation "clients" does not exist' in missing.metadata["error"]


def test_statement_timeout(shop_postgres: str) -> None:
    with SQLExecutionEvaluator(shop_postgres, timeout=0.5) as evaluator:
        started = time.perf_counter()
        runaway = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT max(x) FROM r"
        result = evaluate(evaluator, runaway, "SELECT 1")
        assert (result.score, result.value) == (0, "timeout")
        assert evaluate(evaluator, "SELECT pg_sleep(30)", "SELECT 1").value == "timeout"
        assert time.perf_counter() - started < 5
        assert evaluate(evaluator, "SELECT 1", "SELECT 1").score == 1  # the pooled connection is fine


def test_row_cap_cancels_a_huge_result(shop_postgres: str) -> None:
    with SQLExecutionEvaluator(shop_postgres, timeout=10, max_rows=100) as evaluator:
        started = time.perf_counter()
        result = evaluate(evaluator, "SELECT generate_series(1, 500000000)", "SELECT 1")
        assert result.value == "too_many_rows"
        assert result.metadata["generated"]["row_count"] == 100
        assert time.perf_counter() - started < 5


DESTRUCTIVE = [
    "DROP TABLE orders",
    "DELETE FROM order_items",
    "UPDATE products SET price = 0",
    "INSERT INTO categories VALUES (100, 'Hacked')",
    "TRUNCATE orders CASCADE",
    "CREATE TABLE notes (body TEXT)",
    "ALTER TABLE customers RENAME TO clients",
    "SELECT 1; COMMIT; DROP TABLE orders",
    "WITH gone AS (DELETE FROM orders RETURNING *) SELECT COUNT(*) FROM gone",
    "SELECT * INTO orders_copy FROM orders",
    "SELECT * FROM orders FOR UPDATE",
    "SET default_transaction_read_only = off",
    "COPY orders TO STDOUT",
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    "DO $$ BEGIN DELETE FROM orders; END $$",
    "GRANT ALL ON orders TO PUBLIC",
]


@pytest.mark.parametrize("statement", DESTRUCTIVE)
def test_destructive_statements_are_refused(pg: SQLExecutionEvaluator, statement: str) -> None:
    result = evaluate(pg, statement, "SELECT COUNT(*) FROM orders")
    assert (result.score, result.value) == (0, "refused"), result.comment


# Settings changes the server allows in a read-only transaction; the rollback undoes them.
UNDONE_BY_ROLLBACK = {
    "SET default_transaction_read_only = off",
    "SELECT set_config('default_transaction_read_only', 'off', false)",
}
# Reads the server allows (refused by the parser only).
HARMLESS_READS = {"COPY orders TO STDOUT", "SELECT * FROM orders FOR UPDATE"}


@pytest.mark.parametrize(
    "statement",
    [s for s in DESTRUCTIVE if s not in HARMLESS_READS]
    + ["SELECT nextval('x')", "CREATE TEMP TABLE t AS SELECT 1"],
)
def test_the_transaction_itself_refuses_writes(shop_postgres: str, statement: str) -> None:
    """Even with the parser bypassed, the READ ONLY transaction and extended protocol write nothing."""
    from assay.evaluators.sql.backends.base import ExecutionLimits, QueryError, QueryRefusedError
    from assay.evaluators.sql.backends.postgres import PostgresDatabase

    database = PostgresDatabase(shop_postgres, ExecutionLimits(timeout=2))
    try:
        with database.session(None) as session:
            if statement in UNDONE_BY_ROLLBACK:
                with contextlib.suppress(QueryError):
                    session.run(statement)
            else:
                with pytest.raises(QueryError):
                    session.run(statement)
            with pytest.raises(QueryRefusedError, match="read-only"):
                session.run("DELETE FROM orders")  # still read-only on the same connection
            assert session.run("SELECT COUNT(*) FROM orders").rows == [(600,)]
    finally:
        database.close()


def test_contents_unchanged_after_every_attempt(
    pg: SQLExecutionEvaluator, shop_postgres: str, snapshot_postgres: Any
) -> None:
    from assay.evaluators.sql.backends.base import ExecutionLimits, QueryError
    from assay.evaluators.sql.backends.postgres import PostgresDatabase

    before = snapshot_postgres(shop_postgres)
    for statement in DESTRUCTIVE:
        evaluate(pg, statement, "SELECT 1")
    database = PostgresDatabase(shop_postgres, ExecutionLimits(timeout=2))
    try:
        for statement in DESTRUCTIVE:
            with database.session(None) as session, contextlib.suppress(QueryError):
                session.run(statement)
    finally:
        database.close()
    assert snapshot_postgres(shop_postgres) == before
    assert set(before) == {"categories", "customers", "order_items", "orders", "products"}


def test_unreachable_server_is_an_evaluator_error_not_a_zero() -> None:
    import socket

    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with SQLExecutionEvaluator(f"postgresql://someone:s3cret@127.0.0.1:{port}/db", timeout=1) as evaluator:
        result = evaluate(evaluator, "SELECT 1", "SELECT 1")
    assert result.score is None and result.error and "cannot connect" in result.error
    assert "s3cret" not in result.error and "s3cret" not in str(evaluator.config)


def test_other_postgres_drivers_are_rejected_clearly() -> None:
    with pytest.raises(ValueError, match="psycopg 3"):
        SQLExecutionEvaluator("postgresql+psycopg2://u@localhost/db")


def test_sessions_and_transactions_are_read_only(shop_postgres: str) -> None:
    from assay.evaluators.sql.backends.base import ExecutionLimits
    from assay.evaluators.sql.backends.postgres import PostgresDatabase

    database = PostgresDatabase(shop_postgres, ExecutionLimits(timeout=1.5))
    try:
        with database.session(None) as session:
            for setting, value in [
                ("default_transaction_read_only", "on"),
                ("transaction_read_only", "on"),
                ("statement_timeout", "1500ms"),
                ("lock_timeout", "1500ms"),
                ("idle_in_transaction_session_timeout", "10s"),
            ]:
                assert session.run(f"SELECT current_setting('{setting}')").rows == [(value,)]
            # DISCARD ALL after each query resets to the startup options, not to the server's defaults
            assert session.run("SELECT current_setting('default_transaction_read_only')").rows == [("on",)]
    finally:
        database.close()
