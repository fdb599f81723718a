"""SQL execution accuracy throughput on a realistic SQLite shop database.

    .venv/bin/python bench/sql_execution.py [--rounds N] [--postgres URL]

Builds the shop database of ``tests/evaluators/sql/sample_db.py`` at bench size (5,000
customers, 500 products, 50,000 orders, ~150,000 order items), then evaluates a
text-to-SQL workload of 24 generated/reference pairs (joins, aggregates, ordered
results, wrong answers, refused writes, syntax errors) with SQLExecutionEvaluator:
one thread, then four. Also times per-example fixtures and, with ``--postgres``
(a URL whose user may CREATE DATABASE), the same workload on PostgreSQL.
Prints evaluations per second and how much of the time the queries themselves took.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

from assay.evaluation import EvaluationResult
from assay.evaluators import SQLExecutionEvaluator
from assay.schemas import Example, Run

WORKLOAD = [
    # (reference, generated): equivalent, wrong, refused and broken answers
    ("SELECT COUNT(*) FROM customers WHERE country = 'France'",
     "SELECT COUNT(id) FROM customers WHERE country IN ('France')"),
    ("SELECT DISTINCT c.id, c.name FROM customers c JOIN orders o ON o.customer_id = c.id WHERE o.status = 'cancelled'",
     "SELECT id, name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE status = 'cancelled')"),
    ("SELECT country, COUNT(*) FROM customers GROUP BY country",
     "SELECT COUNT(*) AS n, country FROM customers GROUP BY 2"),
    ("SELECT c.name, SUM(i.quantity * i.unit_price * (1 - i.discount)) FROM order_items i "
     "JOIN products p ON p.id = i.product_id JOIN categories c ON c.id = p.category_id GROUP BY c.name",
     "SELECT c.name, SUM(i.quantity * i.unit_price) - SUM(i.quantity * i.unit_price * i.discount) "
     "FROM categories c JOIN products p ON p.category_id = c.id JOIN order_items i ON i.product_id = p.id GROUP BY c.id"),
    ("SELECT name, price FROM products ORDER BY price DESC, id LIMIT 10",
     "SELECT name, price FROM products ORDER BY price DESC, id LIMIT 10"),
    ("SELECT name, price FROM products ORDER BY price DESC, id LIMIT 10",
     "SELECT name, price FROM products ORDER BY price ASC, id LIMIT 10"),
    ("SELECT id FROM products WHERE id NOT IN (SELECT product_id FROM order_items WHERE quantity = 4)",
     "SELECT p.id FROM products p LEFT JOIN order_items i ON i.product_id = p.id AND i.quantity = 4 WHERE i.order_id IS NULL"),
    ("SELECT COUNT(*) FROM orders WHERE status = 'delivered'", "SELECT COUNT(*) FROM orders"),
    ("SELECT customer_id, COUNT(*) FROM orders GROUP BY customer_id HAVING COUNT(*) >= 15",
     "SELECT customer_id, COUNT(*) FROM orders GROUP BY customer_id HAVING COUNT(*) > 15"),
    ("SELECT strftime('%Y-%m', order_date) AS month, COUNT(*) FROM orders GROUP BY month",
     "SELECT substr(order_date, 1, 7), COUNT(id) FROM orders GROUP BY 1"),
    ("SELECT id, email FROM customers WHERE email IS NULL", "SELECT id, email FROM customers WHERE email = NULL"),
    ("SELECT category_id, AVG(price) FROM products GROUP BY category_id",
     "SELECT category_id, SUM(price) / COUNT(price) FROM products GROUP BY category_id"),
    ("SELECT o.id, SUM(i.quantity) FROM orders o JOIN order_items i ON i.order_id = o.id "
     "WHERE o.order_date >= '2024-06-01' GROUP BY o.id",
     "SELECT order_id, SUM(quantity) FROM order_items WHERE order_id IN "
     "(SELECT id FROM orders WHERE order_date >= '2024-06-01') GROUP BY order_id"),
    ("SELECT city, COUNT(*) FROM customers GROUP BY city", "SELECT city, COUNT(city) FROM customers GROUP BY city"),
    ("SELECT name FROM customers", "DELETE FROM customers"),
    ("SELECT name FROM customers", "SELECT name FROM customers; DROP TABLE customers"),
    ("SELECT name FROM customers", "SELECT name FROM customers WHERE"),
    ("SELECT name FROM customers", "SELECT nme FROM customers"),
    ("SELECT * FROM categories", "SELECT * FROM categories WHERE name = '' OR 1=1"),
    ("SELECT p.category_id, COUNT(DISTINCT o.customer_id) FROM orders o JOIN order_items i ON i.order_id = o.id "
     "JOIN products p ON p.id = i.product_id GROUP BY p.category_id",
     "SELECT p.category_id, COUNT(o.customer_id) FROM orders o JOIN order_items i ON i.order_id = o.id "
     "JOIN products p ON p.id = i.product_id GROUP BY p.category_id"),
    ("SELECT MAX(price) FROM products", "SELECT price FROM products ORDER BY price DESC LIMIT 1"),
    ("SELECT id, signup_date FROM customers WHERE signup_date >= '2022-06-01'",
     "SELECT id, signup_date FROM customers WHERE signup_date > '2022-05-31'"),
    ("SELECT status, COUNT(*) FROM orders GROUP BY status ORDER BY COUNT(*) DESC",
     "SELECT status, COUNT(*) AS n FROM orders GROUP BY status ORDER BY n DESC"),
    ("SELECT id FROM orders WHERE customer_id = 42", "SELECT id FROM orders WHERE customer_id = '42'"),
]  # fmt: skip

FIXTURE_SCHEMA = """
CREATE TABLE employees (id INTEGER PRIMARY KEY, name TEXT, dept TEXT, salary REAL);
CREATE TABLE projects (id INTEGER PRIMARY KEY, lead_id INTEGER REFERENCES employees(id), budget REAL);
"""
FIXTURE_SEED = "\n".join(
    [f"INSERT INTO employees VALUES ({i}, 'E{i}', 'D{i % 4}', {1000 + 37 * i});" for i in range(1, 41)]
    + [f"INSERT INTO projects VALUES ({i}, {i % 40 + 1}, {5000 * i});" for i in range(1, 11)]
)


def load_sample_db() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "tests" / "evaluators" / "sql" / "sample_db.py"
    spec = importlib.util.spec_from_file_location("assay_bench_sample_db", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def pairs(rounds: int, workload: list[tuple[str, str]] = WORKLOAD) -> list[tuple[Run, Example]]:
    """Each round's SQL text is new (a comment), as real generations are: no parse is cached."""
    return [
        (
            Run(outputs={"sql": f"{generated}\n-- round {i}"}),
            Example(outputs={"sql": f"{reference}\n-- round {i}"}),
        )
        for i in range(rounds)
        for reference, generated in workload
    ]


def measure(
    evaluator: SQLExecutionEvaluator, work: list[tuple[Run, Example]], threads: int
) -> dict[str, Any]:
    def one(item: tuple[Run, Example]) -> EvaluationResult:
        result = evaluator.evaluate(*item)
        assert isinstance(result, EvaluationResult) and result.error is None, result
        return result

    started = time.perf_counter()
    if threads == 1:
        results = [one(item) for item in work]
    else:
        with ThreadPoolExecutor(threads) as pool:
            results = list(pool.map(one, work))
    elapsed = time.perf_counter() - started
    query_ms = sum(
        (r.metadata[side] or {}).get("elapsed_ms") or 0.0
        for r in results
        for side in ("reference", "generated")
    )
    verdicts: dict[str, int] = {}
    for result in results:
        verdicts[str(result.value)] = verdicts.get(str(result.value), 0) + 1
    return {
        "evals_per_s": len(work) / elapsed,
        "query_share": query_ms / 1000 / elapsed / threads,
        # thread time per evaluation spent outside the two queries: parsing, comparing, connecting
        "evaluator_ms": (elapsed * threads * 1000 - query_ms) / len(work),
        "verdicts": verdicts,
    }


def report(label: str, figures: dict[str, Any]) -> None:
    print(
        f"{label:<50} {figures['evals_per_s']:7.1f} evals/s  queries {figures['query_share']:5.1%} "
        f"of the time, evaluator {figures['evaluator_ms']:5.2f} ms/eval"
    )


def bench_sqlite(sample_db: ModuleType, rounds: int) -> None:
    size = sample_db.Size(customers=5_000, products=500, orders=50_000)
    with tempfile.TemporaryDirectory() as folder:
        path = sample_db.build_sqlite(Path(folder) / "shop.db", size)
        print(f"shop database: {path.stat().st_size / 1e6:.1f} MB, {len(WORKLOAD)} pairs x {rounds} rounds")
        work = pairs(rounds)
        evaluator = SQLExecutionEvaluator(path)
        first = measure(evaluator, work, threads=1)
        print("verdicts per round:", {k: v // rounds for k, v in sorted(first["verdicts"].items())})
        report("SQLite file, 1 thread", first)
        report("SQLite file, 4 threads", measure(evaluator, work, threads=4))


def bench_fixture(rounds: int) -> None:
    example = Example(
        inputs={"schema_sql": FIXTURE_SCHEMA, "seed_sql": FIXTURE_SEED},
        outputs={"sql": "SELECT dept, AVG(salary) FROM employees GROUP BY dept"},
    )
    run = Run(outputs={"sql": "SELECT dept, SUM(salary) / COUNT(*) FROM employees GROUP BY 1"})
    report(
        "per-example fixture (2 tables, 50 rows), 1 thread",
        measure(SQLExecutionEvaluator(), [(run, example)] * (len(WORKLOAD) * rounds), threads=1),
    )


def bench_postgres(sample_db: ModuleType, url: str, rounds: int) -> None:
    import uuid

    import psycopg

    name = f"assay_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    database_url = url.rsplit("/", 1)[0] + f"/{name}"
    try:
        with psycopg.connect(database_url, autocommit=True) as connection:
            size = sample_db.Size(customers=5_000, products=500, orders=50_000)
            connection.execute(sample_db.SCHEMA + sample_db.seed_sql(size))
            connection.execute("ANALYZE")
        work = pairs(rounds, [(r, g) for r, g in WORKLOAD if "strftime" not in r])
        # the bench's own throwaway database, reached as its creator: speed is measured, not safety
        with SQLExecutionEvaluator(database_url, unsafe_allow_privileged_role=True) as evaluator:
            report("PostgreSQL, 1 thread", measure(evaluator, work, threads=1))
            report("PostgreSQL, 4 threads", measure(evaluator, work, threads=4))
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--postgres", help="a PostgreSQL URL whose user may CREATE DATABASE")
    args = parser.parse_args()
    sample_db = load_sample_db()
    bench_sqlite(sample_db, args.rounds)
    bench_fixture(args.rounds)
    if args.postgres:
        bench_postgres(sample_db, args.postgres, args.rounds)


if __name__ == "__main__":
    main()
