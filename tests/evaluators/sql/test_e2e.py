"""The SQL evaluators through ``assay.evaluate``: a text-to-SQL experiment, stored and aggregated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import assay
from assay.evaluation._names import resolve_evaluator_name
from assay.evaluators import SQLExecutionEvaluator, SQLValidityEvaluator

QUESTIONS = [
    # (question, reference SQL, what the "model" answers)
    (
        "How many customers live in France?",
        "SELECT COUNT(*) FROM customers WHERE country = 'France'",
        "```sql\nSELECT COUNT(id) FROM customers WHERE country IN ('France')\n```",
    ),
    (
        "Which products were never ordered?",
        "SELECT id FROM products WHERE id NOT IN (SELECT product_id FROM order_items)",
        "SELECT p.id FROM products p LEFT JOIN order_items i ON i.product_id = p.id WHERE i.order_id IS NULL",
    ),
    (
        "The five most expensive products, most expensive first",
        "SELECT name, price FROM products ORDER BY price DESC LIMIT 5",
        "SELECT name, price FROM products ORDER BY price ASC LIMIT 5",
    ),
    (
        "Number of delivered orders",
        "SELECT COUNT(*) FROM orders WHERE status = 'delivered'",
        "SELECT COUNT(*) FROM orders",
    ),
    (
        "Remove cancelled orders",
        "SELECT COUNT(*) FROM orders WHERE status = 'cancelled'",
        "DELETE FROM orders WHERE status = 'cancelled'",
    ),
    (
        "Customer names",
        "SELECT name FROM customers",
        "SELECT name FROM customers WHERE",
    ),
]


def sql_model(inputs: dict[str, Any]) -> dict[str, str]:
    answers = {question: answer for question, _, answer in QUESTIONS}
    return {"sql": answers[inputs["question"]]}


def execution_accuracy(evaluation_results: list[list[assay.EvaluationResult]]) -> dict[str, Any]:
    scores = [r.score for row in evaluation_results for r in row if r.key == "sql_execution"]
    return {"key": "execution_accuracy", "score": sum(scores) / len(scores)}


def test_text_to_sql_experiment(shop_sqlite: Path, sha256_of: Any) -> None:
    before = sha256_of(shop_sqlite)
    data = [{"inputs": {"question": q}, "outputs": {"sql": ref}} for q, ref, _ in QUESTIONS]
    with SQLExecutionEvaluator(shop_sqlite) as execution:
        results = assay.evaluate(
            sql_model,
            data=data,
            evaluators=[
                execution,
                SQLValidityEvaluator(dialect="sqlite", name="sqlite_validity"),
                "sql_validity",
            ],
            summary_evaluators=[execution_accuracy],
            client=assay.Client(database_url="sqlite://"),
            max_concurrency=4,
        )
    rows = list(results)
    assert len(rows) == len(QUESTIONS)
    by_question: dict[str, dict[str, Any]] = {}
    for row in rows:
        found = {r.key: r for r in row["evaluation_results"]["results"]}
        by_question[row["example"].inputs["question"]] = found
    verdicts = [by_question[q]["sql_execution"].value for q, _, _ in QUESTIONS]
    assert verdicts == ["match", "match", "mismatch", "mismatch", "refused", "syntax_error"]
    for key in ("sqlite_validity", "sql_validity"):
        validity = [by_question[q][key].score for q, _, _ in QUESTIONS]
        assert validity == [1, 1, 1, 1, 0, 0]

    aggregate = results.aggregate["sql_execution"]
    assert aggregate.mean == 2 / 6 and aggregate.errors == 0
    summary = {r.key: r.score for r in results.summary_results.results}
    assert summary["execution_accuracy"] == 2 / 6
    assert sha256_of(shop_sqlite) == before


def test_evaluator_errors_are_counted_apart_from_zeros(shop_sqlite: Path) -> None:
    data = [
        {"inputs": {"question": "ok"}, "outputs": {"sql": "SELECT 1"}},
        {"inputs": {"question": "broken reference"}, "outputs": {"sql": "SELECT * FROM nowhere"}},
    ]
    results = assay.evaluate(
        lambda inputs: {"sql": "SELECT 1"},
        data=data,
        evaluators=[SQLExecutionEvaluator(shop_sqlite)],
        client=assay.Client(database_url="sqlite://"),
    )
    aggregate = results.aggregate["sql_execution"]
    assert (aggregate.mean, aggregate.n, aggregate.errors) == (1.0, 1, 1)


def test_sql_validity_is_known_by_name() -> None:
    evaluator = resolve_evaluator_name("sql_validity")
    assert isinstance(evaluator, SQLValidityEvaluator)
    assert evaluator.name == "sql_validity"
