"""SQLExecutionEvaluator on a realistic SQLite shop database (a real file, never modified)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from assay.evaluation import EvaluationResult
from assay.evaluators import SQLExecutionEvaluator
from assay.schemas import Example, Run


def evaluate(
    evaluator: SQLExecutionEvaluator, generated: str, reference: str | None = None, **outputs: Any
) -> EvaluationResult:
    if reference is not None:
        outputs["sql"] = reference
    result = evaluator.evaluate(Run(outputs={"sql": generated}), Example(outputs=outputs))
    assert isinstance(result, EvaluationResult)
    return result


@pytest.fixture
def shop(shop_sqlite: Path) -> SQLExecutionEvaluator:
    return SQLExecutionEvaluator(shop_sqlite, timeout=2)


# --- equivalent queries written differently score 1 ---------------------------------------

EQUIVALENT = {
    "join_vs_subquery": (
        "SELECT DISTINCT c.id, c.name FROM customers c JOIN orders o ON o.customer_id = c.id "
        "WHERE o.status = 'cancelled'",
        "SELECT id, name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE status = 'cancelled')",
    ),
    "aliases_and_implicit_join": (
        "SELECT p.name AS product, c.name AS category FROM products p JOIN categories c ON c.id = p.category_id",
        "SELECT products.name, categories.name FROM products, categories WHERE products.category_id = categories.id",
    ),
    "column_order": (
        "SELECT country, COUNT(*) FROM customers GROUP BY country",
        "SELECT COUNT(*) AS n, country FROM customers GROUP BY 2",
    ),
    "exists_vs_join_with_group": (
        "SELECT p.id FROM products p WHERE EXISTS (SELECT 1 FROM order_items i WHERE i.product_id = p.id AND i.quantity = 4)",
        "SELECT DISTINCT product_id FROM order_items WHERE quantity = 4",
    ),
    "cte_vs_inline": (
        "WITH spend AS (SELECT o.customer_id, SUM(i.quantity * i.unit_price) AS total FROM orders o "
        "JOIN order_items i ON i.order_id = o.id GROUP BY o.customer_id) SELECT customer_id FROM spend WHERE total > 3000",
        "SELECT o.customer_id FROM orders o JOIN order_items i ON i.order_id = o.id GROUP BY o.customer_id "
        "HAVING SUM(i.quantity * i.unit_price) > 3000",
    ),
    "float_sums_in_another_order": (
        "SELECT c.name, SUM(i.quantity * i.unit_price * (1 - i.discount)) FROM order_items i "
        "JOIN products p ON p.id = i.product_id JOIN categories c ON c.id = p.category_id GROUP BY c.name",
        "SELECT c.name, (SELECT SUM(i.quantity * i.unit_price) - SUM(i.quantity * i.unit_price * i.discount) "
        "FROM order_items i JOIN products p ON p.id = i.product_id WHERE p.category_id = c.id) FROM categories c "
        "WHERE c.id IN (SELECT category_id FROM products)",
    ),
    "nulls_in_results": (
        "SELECT id, city FROM customers WHERE country = 'Japan'",
        "SELECT city, id FROM customers WHERE country IN ('Japan')",
    ),
    "null_test_written_differently": (
        "SELECT id FROM customers WHERE email IS NULL",
        "SELECT id FROM customers WHERE coalesce(email, '') = ''",
    ),
}


@pytest.mark.parametrize("case", sorted(EQUIVALENT))
def test_equivalent_queries_score_1(shop: SQLExecutionEvaluator, case: str) -> None:
    reference, generated = EQUIVALENT[case]
    result = evaluate(shop, generated, reference)
    assert result.error is None, result.error
    assert (result.score, result.value) == (1, "match"), result.comment
    assert result.metadata["f1"] == 1.0
    assert result.metadata["reference"]["row_count"] > 0


# --- wrong answers score 0, with partial credit ----------------------------------------------


def test_wrong_filter_scores_0_with_partial_credit(shop: SQLExecutionEvaluator) -> None:
    result = evaluate(
        shop,
        "SELECT id FROM orders WHERE status <> 'cancelled'",
        "SELECT id FROM orders WHERE status = 'delivered'",
    )
    assert (result.score, result.value) == (0, "mismatch")
    meta = result.metadata
    assert meta["recall"] == 1.0 and 0 < meta["precision"] < 1
    assert meta["missing_rows"] == [] and 0 < len(meta["unexpected_rows"]) <= 10


def test_wrong_aggregation_scores_0(shop: SQLExecutionEvaluator) -> None:
    result = evaluate(shop, "SELECT COUNT(*) FROM orders", "SELECT COUNT(DISTINCT customer_id) FROM orders")
    assert result.score == 0 and result.metadata["f1"] == 0.0
    assert result.metadata["missing_rows"] != result.metadata["unexpected_rows"]


def test_wrong_join_scores_0(shop: SQLExecutionEvaluator) -> None:
    result = evaluate(
        shop,
        "SELECT p.name, c.name FROM products p JOIN categories c ON c.id = p.id",
        "SELECT p.name, c.name FROM products p JOIN categories c ON c.id = p.category_id",
    )
    assert result.score == 0


def test_duplicates_matter(shop: SQLExecutionEvaluator) -> None:
    result = evaluate(shop, "SELECT DISTINCT country FROM customers", "SELECT country FROM customers")
    assert result.score == 0
    assert result.metadata["precision"] == 1.0
    assert result.metadata["recall"] == pytest.approx(5 / 120, abs=1e-6)


def test_comparing_with_null_by_equals_scores_0(shop: SQLExecutionEvaluator) -> None:
    result = evaluate(
        shop, "SELECT id FROM customers WHERE email = NULL", "SELECT id FROM customers WHERE email IS NULL"
    )
    assert result.score == 0
    assert result.metadata["generated"]["row_count"] == 0


def test_float_tolerance(shop_sqlite: Path) -> None:
    reference = "SELECT category_id, AVG(price) FROM products GROUP BY category_id"
    rounded = "SELECT category_id, ROUND(AVG(price), 2) FROM products GROUP BY category_id"
    assert evaluate(SQLExecutionEvaluator(shop_sqlite), rounded, reference).score == 0
    assert evaluate(SQLExecutionEvaluator(shop_sqlite, float_tolerance=1e-3), rounded, reference).score == 1


# --- row order ----------------------------------------------------------------------------

DESC = "SELECT name, price FROM products ORDER BY price DESC, id"
ASC = "SELECT name, price FROM products ORDER BY price ASC, id"
UNORDERED = "SELECT name, price FROM products"


def test_order_matters_when_the_reference_orders(shop: SQLExecutionEvaluator) -> None:
    result = evaluate(shop, ASC, DESC)
    assert result.score == 0 and result.metadata["order_compared"] is True
    assert result.metadata["first_order_difference"] == 0
    assert result.metadata["f1"] == 1.0
    assert evaluate(shop, DESC, DESC).score == 1


def test_order_is_ignored_when_the_reference_does_not_order(shop: SQLExecutionEvaluator) -> None:
    result = evaluate(shop, ASC, UNORDERED)
    assert result.score == 1 and result.metadata["order_compared"] is False


def test_order_sensitivity_can_be_forced_either_way(shop_sqlite: Path) -> None:
    assert evaluate(SQLExecutionEvaluator(shop_sqlite, order_sensitive=False), ASC, DESC).score == 1
    assert evaluate(SQLExecutionEvaluator(shop_sqlite, order_sensitive=True), DESC, UNORDERED).score == 0


def test_positional_columns_option(shop_sqlite: Path) -> None:
    positional = SQLExecutionEvaluator(shop_sqlite, column_matching="positional")
    reference = "SELECT name, price FROM products"
    assert evaluate(positional, "SELECT price, name FROM products", reference).score == 0
    assert evaluate(positional, "SELECT name AS n, price AS p FROM products", reference).score == 1


def test_by_name_columns_option(shop_sqlite: Path) -> None:
    by_name = SQLExecutionEvaluator(shop_sqlite, column_matching="by_name")
    reference = "SELECT name, price FROM products"
    assert evaluate(by_name, "SELECT price, name FROM products", reference).score == 1
    renamed = evaluate(by_name, "SELECT name AS product, price FROM products", reference)
    assert renamed.score == 0 and "column names differ" in (renamed.comment or "")


# --- failures of the generated query ----------------------------------------------------


def test_syntax_error_scores_0_with_the_message(shop: SQLExecutionEvaluator) -> None:
    result = evaluate(shop, "SELECT name FROM customers WHERE", "SELECT name FROM customers")
    assert (result.score, result.value) == (0, "syntax_error")
    assert result.error is None  # the model failed, not the evaluator
    assert "syntax error" in result.metadata["error"] or "incomplete input" in result.metadata["error"]
    assert result.metadata["static_check"]["parsed"] is False


def test_unknown_table_is_an_execution_error(shop: SQLExecutionEvaluator) -> None:
    result = evaluate(shop, "SELECT * FROM clients", "SELECT * FROM customers")
    assert (result.score, result.value) == (0, "execution_error")
    assert "no such table: clients" in result.metadata["error"]


def test_runaway_recursive_cte_times_out(shop_sqlite: Path) -> None:
    evaluator = SQLExecutionEvaluator(shop_sqlite, timeout=0.3)
    runaway = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT max(x) FROM r"
    result = evaluate(evaluator, runaway, "SELECT 1")
    assert (result.score, result.value) == (0, "timeout")
    assert "0.3 s timeout" in result.metadata["error"]
    # the session survives: the next evaluation works
    assert evaluate(evaluator, "SELECT 1", "SELECT 1").score == 1


def test_huge_values_are_capped(shop: SQLExecutionEvaluator) -> None:
    result = evaluate(shop, "SELECT length(randomblob(300000000))", "SELECT 1")
    assert (result.score, result.value) == (0, "too_large")
    assert "max_value_bytes=1,048,576" in result.metadata["error"]


def test_too_many_rows_scores_0(shop_sqlite: Path) -> None:
    evaluator = SQLExecutionEvaluator(shop_sqlite, max_rows=50)
    result = evaluate(evaluator, "SELECT * FROM order_items", "SELECT * FROM customers LIMIT 10")
    assert (result.score, result.value) == (0, "too_many_rows")
    assert result.metadata["generated"]["truncated"] is True
    assert result.metadata["generated"]["row_count"] == 50


def test_reference_over_max_rows_is_an_evaluator_error(shop_sqlite: Path) -> None:
    evaluator = SQLExecutionEvaluator(shop_sqlite, max_rows=50)
    result = evaluate(evaluator, "SELECT 1", "SELECT * FROM order_items")
    assert result.score is None and result.error and "raise max_rows" in result.error


# --- safety: refused before execution, and the database byte-for-byte unchanged ------------

DESTRUCTIVE = [
    "DROP TABLE orders",
    "DELETE FROM order_items",
    "UPDATE products SET price = 0",
    "INSERT INTO categories VALUES (100, 'Hacked')",
    "CREATE TABLE notes (body TEXT)",
    "ALTER TABLE customers RENAME TO clients",
    "ATTACH DATABASE 'attached_by_test.db' AS other",
    "PRAGMA journal_mode = WAL",
    "PRAGMA user_version = 42",
    "PRAGMA writable_schema = ON",
    "VACUUM",
    "REINDEX",
    "REPLACE INTO categories VALUES (1, 'Hacked')",
    "SELECT * FROM orders; DROP TABLE orders",
    "SELECT 1; DELETE FROM orders",
    "BEGIN; DELETE FROM orders; COMMIT",
]


@pytest.mark.parametrize("statement", DESTRUCTIVE)
def test_destructive_statements_are_refused_and_the_file_is_unchanged(
    shop_sqlite: Path, sha256_of: Any, statement: str
) -> None:
    before, listing = sha256_of(shop_sqlite), sorted(os.listdir(shop_sqlite.parent))
    result = evaluate(SQLExecutionEvaluator(shop_sqlite), statement, "SELECT COUNT(*) FROM orders")
    assert (result.score, result.value) == (0, "refused"), result.comment
    assert result.metadata["static_check"]["refusal"]
    assert sha256_of(shop_sqlite) == before
    assert sorted(os.listdir(shop_sqlite.parent)) == listing  # no journal, no attached file


@pytest.mark.parametrize(
    "statement", [*DESTRUCTIVE, "SELECT load_extension('/tmp/x')", "VACUUM INTO 'copy.db'"]
)
def test_the_connection_itself_refuses_writes(shop_sqlite: Path, sha256_of: Any, statement: str) -> None:
    """Even with the parser bypassed, the read-only connection writes nothing."""
    from assay.evaluators.sql.backends.base import ExecutionLimits, QueryRefusedError
    from assay.evaluators.sql.backends.sqlite import SQLiteFile

    before, listing = sha256_of(shop_sqlite), sorted(os.listdir(shop_sqlite.parent))
    database = SQLiteFile(shop_sqlite, ExecutionLimits(timeout=2))
    with database.session(None) as session, pytest.raises(QueryRefusedError):
        session.run(statement)
    assert sha256_of(shop_sqlite) == before
    assert sorted(os.listdir(shop_sqlite.parent)) == listing


def test_a_wal_database_is_left_unchanged(tmp_path: Path, sha256_of: Any) -> None:
    path = tmp_path / "wal.db"
    connection = sqlite3.connect(path)
    connection.executescript(
        "PRAGMA journal_mode = WAL; CREATE TABLE t (x INT); INSERT INTO t VALUES (1), (2);"
    )
    connection.close()
    before = sha256_of(path)
    evaluator = SQLExecutionEvaluator(path)
    assert evaluate(evaluator, "SELECT x FROM t", "SELECT x FROM t ORDER BY x").score == 1
    assert evaluate(evaluator, "DELETE FROM t", "SELECT x FROM t").value == "refused"
    assert sha256_of(path) == before


# --- where the SQL and the reference come from ---------------------------------------------


def test_markdown_fences_and_output_keys(shop: SQLExecutionEvaluator, shop_sqlite: Path) -> None:
    reference = Example(outputs={"sql": "SELECT COUNT(*) FROM products"})
    fenced = "Here you go:\n```sql\nSELECT COUNT(id) FROM products\n```\nHope it helps."
    assert shop.evaluate(Run(outputs={"text": fenced}), reference).score == 1  # type: ignore[union-attr]
    assert shop.evaluate(Run(outputs={"output": fenced}), reference).score == 1  # type: ignore[union-attr]
    custom = SQLExecutionEvaluator(shop_sqlite, output_key="query")
    assert custom.evaluate(Run(outputs={"query": fenced}), reference).score == 1  # type: ignore[union-attr]


def test_where_the_generated_sql_is_found(shop: SQLExecutionEvaluator, shop_sqlite: Path) -> None:
    example = Example(outputs={"sql": "SELECT 1"})
    only_value = shop.evaluate(Run(outputs={"answer": "SELECT 1"}), example)
    assert isinstance(only_value, EvaluationResult) and only_value.score == 1
    message = {"sql": {"role": "assistant", "content": "```sql\nSELECT 1\n```"}}
    assert shop.evaluate(Run(outputs=message), example).score == 1  # type: ignore[union-attr]
    ambiguous = shop.evaluate(Run(outputs={"answer": "SELECT 1", "notes": "x"}), example)
    assert isinstance(ambiguous, EvaluationResult) and ambiguous.score is None
    assert "output_key" in (ambiguous.error or "") and "'answer'" in (ambiguous.error or "")
    named = SQLExecutionEvaluator(shop_sqlite, output_key="query").evaluate(
        Run(outputs={"sql": "SELECT 1"}), example
    )
    assert isinstance(named, EvaluationResult) and "no key 'query'" in (named.error or "")
    not_text = shop.evaluate(Run(outputs={"sql": 42}), example)
    assert isinstance(not_text, EvaluationResult) and "must be text" in (not_text.error or "")
    failed = shop.evaluate(Run(outputs=None, error="ValueError: boom"), example)
    assert isinstance(failed, EvaluationResult) and "the target failed: ValueError: boom" in (
        failed.error or ""
    )


def test_empty_generation_scores_0(shop: SQLExecutionEvaluator) -> None:
    result = shop.evaluate(Run(outputs={"sql": "  "}), Example(outputs={"sql": "SELECT 1"}))
    assert isinstance(result, EvaluationResult)
    assert (result.score, result.value) == (0, "no_sql")


def test_missing_reference_is_an_evaluator_error(shop: SQLExecutionEvaluator) -> None:
    result = shop.evaluate(Run(outputs={"sql": "SELECT 1"}), Example(outputs={"answer": 1}))
    assert isinstance(result, EvaluationResult)
    assert result.score is None and "expected_rows" in (result.error or "")


def test_broken_reference_is_an_evaluator_error_not_a_zero(shop: SQLExecutionEvaluator) -> None:
    broken = evaluate(shop, "SELECT 1", "SELECT * FROM no_such_table")
    assert broken.score is None and "reference query" in (broken.error or "")
    writes = evaluate(shop, "SELECT 1", "DELETE FROM orders")
    assert writes.score is None and "not a read-only query" in (writes.error or "")


def test_expected_rows_as_lists_and_dicts(shop: SQLExecutionEvaluator) -> None:
    sql = "SELECT name FROM categories WHERE id <= 3"
    assert evaluate(shop, sql, expected_rows=[["Garden"], ["Books"], ["Electronics"]]).score == 1
    assert evaluate(shop, sql, expected_rows=[["Books"], ["Electronics"]]).score == 0
    as_dicts = [{"name": "Books"}, {"name": "Electronics"}, {"name": "Garden"}]
    result = evaluate(shop, sql, expected_rows=as_dicts)
    assert result.score == 1 and result.metadata["reference"]["columns"] == ["name"]


def test_expected_rows_are_not_order_sensitive_unless_asked(shop_sqlite: Path) -> None:
    sql = "SELECT id FROM categories WHERE id <= 3 ORDER BY id"
    expected = [[3], [2], [1]]
    assert evaluate(SQLExecutionEvaluator(shop_sqlite), sql, expected_rows=expected).score == 1
    assert (
        evaluate(SQLExecutionEvaluator(shop_sqlite, order_sensitive=True), sql, expected_rows=expected).score
        == 0
    )


def test_expected_columns_with_by_name(shop_sqlite: Path) -> None:
    evaluator = SQLExecutionEvaluator(shop_sqlite, column_matching="by_name")
    outputs = {"expected_rows": [[1, "Books"]], "expected_columns": ["id", "name"]}
    assert evaluate(evaluator, "SELECT name, id FROM categories WHERE id = 1", **outputs).score == 1
    assert evaluate(evaluator, "SELECT name AS label, id FROM categories WHERE id = 1", **outputs).score == 0


def test_malformed_expected_rows_are_evaluator_errors(shop: SQLExecutionEvaluator) -> None:
    ragged = evaluate(shop, "SELECT 1", expected_rows=[[1], [1, 2]])
    assert ragged.error and "expected_rows'][1] has 2 values" in ragged.error
    not_a_list = evaluate(shop, "SELECT 1", expected_rows="1")
    assert not_a_list.error and "must be a list" in not_a_list.error


# --- metadata -------------------------------------------------------------------------------


def test_metadata_holds_rows_columns_timings_and_flags(shop: SQLExecutionEvaluator) -> None:
    result = evaluate(
        shop,
        "SELECT id, name FROM customers WHERE country = 'Japan' OR 1=1",
        "SELECT id, name FROM customers WHERE country = 'Japan'",
    )
    meta = result.metadata
    assert meta["flags"] == ["tautology"]
    assert meta["generated"]["columns"] == ["id", "name"]
    assert meta["generated"]["row_count"] == 120 and len(meta["generated"]["rows"]) == 20
    assert meta["generated"]["elapsed_ms"] >= 0 and meta["reference"]["elapsed_ms"] >= 0
    assert meta["reference"]["row_count"] == meta["matched_rows"]
    assert len(meta["unexpected_rows"]) == 10
    assert meta["generated_sql"].startswith("SELECT id") and meta["dialect"] == "sqlite"
    assert meta["error"] is None


def test_results_are_plain_json(shop: SQLExecutionEvaluator) -> None:
    import orjson

    result = evaluate(shop, "SELECT zeroblob(2), 1e999, NULL", "SELECT zeroblob(2), 1e999, 1")
    decoded = orjson.loads(orjson.dumps(result.model_dump(mode="json")))
    assert decoded["metadata"]["generated"]["rows"] == [["0x0000", "Infinity", None]]


# --- databases ---------------------------------------------------------------------------------


def test_fixture_per_example(shop_sql: tuple[str, str]) -> None:
    schema, seed = shop_sql
    evaluator = SQLExecutionEvaluator()
    example = Example(
        inputs={"schema_sql": schema, "seed_sql": seed},
        outputs={"sql": "SELECT COUNT(*) FROM customers WHERE country = 'France'"},
    )
    run = Run(outputs={"sql": "SELECT SUM(country = 'France') FROM customers"})
    result = evaluator.evaluate(run, example)
    assert isinstance(result, EvaluationResult) and result.score == 1
    # a fixture is built fresh each time: a refused write never reaches it, and nothing persists
    assert evaluator.evaluate(Run(outputs={"sql": "DELETE FROM customers"}), example).value == "refused"  # type: ignore[union-attr]


def test_fixture_needs_schema_sql() -> None:
    result = SQLExecutionEvaluator().evaluate(
        Run(outputs={"sql": "SELECT 1"}), Example(outputs={"sql": "SELECT 1"})
    )
    assert isinstance(result, EvaluationResult)
    assert result.score is None and "schema_sql" in (result.error or "")


@pytest.mark.parametrize(
    "schema",
    [
        "ATTACH DATABASE 'escape.db' AS e; CREATE TABLE e.t (x INT);",
        "CREATE TABLE t (x INT); VACUUM INTO 'escape.db';",
    ],
)
def test_fixture_cannot_write_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, schema: str) -> None:
    monkeypatch.chdir(tmp_path)
    example = Example(inputs={"schema_sql": schema}, outputs={"sql": "SELECT 1"})
    result = SQLExecutionEvaluator().evaluate(Run(outputs={"sql": "SELECT 1"}), example)
    assert isinstance(result, EvaluationResult) and result.error and "schema_sql" in result.error
    assert not (tmp_path / "escape.db").exists()


def test_database_arguments_are_checked_up_front(tmp_path: Path, shop_sqlite: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not found"):
        SQLExecutionEvaluator(tmp_path / "missing.db")
    not_sqlite = tmp_path / "notes.txt"
    not_sqlite.write_text("hello, this is not a database")
    with pytest.raises(ValueError, match="not a SQLite database"):
        SQLExecutionEvaluator(not_sqlite)
    with pytest.raises(ValueError, match="unsupported database URL scheme 'mysql'"):
        SQLExecutionEvaluator("mysql://user@localhost/db")
    with pytest.raises(ValueError, match="in-memory"):
        SQLExecutionEvaluator("sqlite://")
    with pytest.raises(ValueError, match="timeout"):
        SQLExecutionEvaluator(shop_sqlite, timeout=0)
    with pytest.raises(ValueError, match="order_sensitive"):
        SQLExecutionEvaluator(shop_sqlite, order_sensitive="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="column_matching"):
        SQLExecutionEvaluator(shop_sqlite, column_matching="names")  # type: ignore[arg-type]
    url = SQLExecutionEvaluator(f"sqlite:///{shop_sqlite}")
    assert evaluate(url, "SELECT 1", "SELECT 1").score == 1


def test_async_and_threaded_use(shop: SQLExecutionEvaluator) -> None:
    example = Example(outputs={"sql": "SELECT COUNT(*) FROM orders"})

    async def many() -> list[Any]:
        runs = [Run(outputs={"sql": f"SELECT COUNT(*) + {i % 2} FROM orders"}) for i in range(8)]
        return await asyncio.gather(*(shop.aevaluate(run, example) for run in runs))

    scores = [r.score for r in asyncio.run(many())]
    assert scores == [1, 0] * 4
    with ThreadPoolExecutor(4) as pool:
        threaded = list(
            pool.map(
                lambda i: (
                    evaluate(
                        shop, f"SELECT COUNT(*) - {i % 2} FROM orders", "SELECT COUNT(*) FROM orders"
                    ).score
                ),
                range(8),
            )
        )
    assert threaded == [1, 0] * 4


def test_a_finished_query_is_never_interrupted_later(shop_sqlite: Path) -> None:
    """Deadlines end with their query: many quick queries under a short timeout all succeed.
    Evaluations go on for twice the timeout, so a deadline that outlived its query would
    land on a later one; the timeout is ten times a query's usual time (at 0.05 s,
    1 of 10 runs at load 15-20 had a quick query overrun it on the wall clock)."""
    evaluator = SQLExecutionEvaluator(shop_sqlite, timeout=0.5)
    started, evaluations = time.perf_counter(), 0
    while evaluations < 300 or time.perf_counter() - started < 1.0:  # twice the timeout at least
        result = evaluate(evaluator, "SELECT COUNT(*) FROM customers", "SELECT COUNT(id) FROM customers")
        assert result.score == 1, result.metadata
        evaluations += 1


def test_fixture_building_has_a_deadline() -> None:
    runaway = (
        "CREATE TABLE t AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
        "SELECT max(x) AS x FROM r;"
    )
    example = Example(inputs={"schema_sql": runaway}, outputs={"sql": "SELECT 1"})
    result = SQLExecutionEvaluator(timeout=0.3).evaluate(Run(outputs={"sql": "SELECT 1"}), example)
    assert isinstance(result, EvaluationResult)
    assert result.error and "took more than 0.3 s" in result.error


def test_pathological_nesting_is_the_model_failing_not_the_evaluator(shop: SQLExecutionEvaluator) -> None:
    nested = "SELECT " + "(" * 5000 + "1" + ")" * 5000
    result = evaluate(shop, nested, "SELECT 1")
    assert result.error is None
    assert (result.score, result.value) == (0, "syntax_error")
