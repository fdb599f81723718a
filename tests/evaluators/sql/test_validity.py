"""SQLValidityEvaluator: a parse-only check, no database needed."""

from __future__ import annotations

import pytest

from assay.evaluation import EvaluationResult
from assay.evaluators import SQLValidityEvaluator
from assay.schemas import Run


def check(sql: str, **options: object) -> EvaluationResult:
    result = SQLValidityEvaluator(**options).evaluate(Run(outputs={"sql": sql}))  # type: ignore[arg-type]
    assert isinstance(result, EvaluationResult)
    return result


def test_a_valid_query_scores_1_with_flags_in_metadata() -> None:
    result = check("SELECT * FROM users WHERE name = 'x' OR 1=1", dialect="sqlite")
    assert (result.score, result.value) == (1, "valid")
    assert result.metadata["flags"] == ["tautology"]
    assert result.metadata["static_check"]["tables"] == ["users"]


def test_syntax_errors_score_0_with_the_parser_message() -> None:
    result = check("SELECT name FROM customers WHERE", dialect="sqlite")
    assert (result.score, result.value) == (0, "syntax_error")
    assert "Line 1" in (result.comment or "")


def test_dialects_differ() -> None:
    postgres_only = "SELECT x::int FROM t"
    assert check(postgres_only, dialect="postgres").score == 1
    assert check("SELECT TOP 5 name FROM t", dialect="tsql").score == 1
    assert check("SELECT TOP 5 name FROM t", dialect="postgres").score == 0


def test_non_queries_score_0_unless_allowed() -> None:
    assert check("DELETE FROM t WHERE id = 1").value == "refused"
    allowed = check("DELETE FROM t WHERE id = 1", require_query=False)
    assert (allowed.score, allowed.value) == (1, "valid")
    assert allowed.metadata["flags"] == ["dml"]


def test_stacked_statements_score_0_even_when_writes_are_allowed() -> None:
    result = check("SELECT 1; DROP TABLE t", require_query=False)
    assert (result.score, result.value) == (0, "refused")
    assert "stacked_statements" in result.metadata["flags"]


def test_fences_output_keys_and_empty_output() -> None:
    fenced = SQLValidityEvaluator().evaluate(Run(outputs={"text": "```sql\nSELECT 1\n```"}))
    assert isinstance(fenced, EvaluationResult) and fenced.score == 1
    custom = SQLValidityEvaluator(output_key="query").evaluate(Run(outputs={"query": "SELECT 1"}))
    assert isinstance(custom, EvaluationResult) and custom.score == 1
    assert check("").value == "no_sql"


def test_unknown_dialect_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="unknown SQL dialect"):
        SQLValidityEvaluator(dialect="oracle9")
