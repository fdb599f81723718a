"""SQL evaluators: execution accuracy against a real database, and a parse-only validity check.

``SQLExecutionEvaluator`` runs the generated query and the reference query on the
same read-only database and compares the result sets (the Spider/BIRD measure).
``SQLValidityEvaluator`` only parses, for when no database is at hand.
"""

from __future__ import annotations

import math
from typing import Any, Literal, TypeVar

from assay.errors import (
    QueryError,
    QueryRefusedError,
    QueryTimeoutError,
    QueryTooLargeError,
    ReferenceQueryError,
)
from assay.evaluation.evaluator import BaseEvaluator
from assay.evaluators.sql._outcome import ExecutedResult, Outcome
from assay.evaluators.sql._result_equality import (
    COLUMN_MATCHINGS,
    ColumnMatching,
    CompareOptions,
    ResultSet,
    compare_results,
)
from assay.evaluators.sql._safety import StaticReport, analyze_sql, check_dialect
from assay.evaluators.sql._text import Reference, generated_sql, read_reference
from assay.evaluators.sql._values import clip_text, normalize_row
from assay.evaluators.sql.backends import open_database
from assay.evaluators.sql.backends.base import Database, DatabaseSpec, ExecutionLimits, QueryResult, Session
from assay.schemas import EvaluationResult, Example, Run

OrderSensitivity = bool | Literal["auto"]
_Evaluator = TypeVar("_Evaluator", bound="SQLExecutionEvaluator")

__all__ = ["SQLExecutionEvaluator", "SQLValidityEvaluator"]


class SQLExecutionEvaluator(BaseEvaluator):
    """Execution accuracy: does the generated SQL return the reference's rows?

    Scores 1 when the result sets match and 0 otherwise; row-level precision,
    recall and F1 are in the metadata as partial credit. A generated query that is
    refused, fails, times out or returns too many rows scores 0 with the reason.
    A broken reference or an unreachable database is an evaluator error, not a 0.

    Args:
        database: a SQLite file path, ``sqlite:///path``, a PostgreSQL URL, or None to
            build a fresh in-memory SQLite database per example from
            ``example.inputs["schema_sql"]`` and ``["seed_sql"]``.
        dialect: the sqlglot dialect the SQL is written in (default: the database's).
        timeout: seconds each query may run.
        order_sensitive: ``"auto"`` compares row order only when the reference query
            ends with ORDER BY; True always; False never.
        float_tolerance: numbers match within this relative (and, below 1, absolute) difference.
        column_matching: ``"any_order"`` (names ignored, columns aligned by content),
            ``"positional"`` (names ignored, order matters) or ``"by_name"``.
        output_key: the key of ``run.outputs`` holding the SQL (default: "sql", then
            "text", then "output", else the only value); markdown fences are stripped.
        max_rows: rows kept per result; a generated query returning more scores 0.
        max_value_bytes, max_row_bytes, max_result_bytes: bytes one cell, one row and a
            whole result may hold, enforced while rows stream; past one a generated
            query scores 0 (``too_large``) and a reference is an evaluator error.
        unsafe_allow_privileged_role: run PostgreSQL queries even as a role that may do
            more than read (superuser, replication, pg_read_server_files...). Without
            it such a role is refused at the first connection.
    """

    def __init__(
        self,
        database: DatabaseSpec = None,
        dialect: str | None = None,
        timeout: float = 5.0,
        order_sensitive: OrderSensitivity = "auto",
        float_tolerance: float = 1e-6,
        *,
        column_matching: ColumnMatching = "any_order",
        output_key: str | None = None,
        max_rows: int = 10_000,
        max_value_bytes: int = ExecutionLimits.max_value_bytes,
        max_row_bytes: int = ExecutionLimits.max_row_bytes,
        max_result_bytes: int = ExecutionLimits.max_result_bytes,
        unsafe_allow_privileged_role: bool = False,
        name: str = "sql_execution",
    ) -> None:
        _check_options(timeout, order_sensitive, float_tolerance, column_matching, max_rows)
        byte_limits = {
            "max_value_bytes": max_value_bytes,
            "max_row_bytes": max_row_bytes,
            "max_result_bytes": max_result_bytes,
        }
        for option, value in byte_limits.items():
            _check_positive_int(option, value)
        self.limits = ExecutionLimits(timeout=float(timeout), max_rows=max_rows, **byte_limits)
        self.database: Database = open_database(
            database, self.limits, allow_privileged_role=unsafe_allow_privileged_role
        )
        self.dialect = check_dialect(dialect) or self.database.dialect
        self.order_sensitive = order_sensitive
        self.float_tolerance = float(float_tolerance)
        self.column_matching: ColumnMatching = column_matching
        self.output_key = output_key
        super().__init__(
            name=name,
            database=self.database.description,
            dialect=self.dialect,
            timeout=self.limits.timeout,
            order_sensitive=order_sensitive,
            float_tolerance=self.float_tolerance,
            column_matching=column_matching,
            max_rows=max_rows,
            **byte_limits,
            unsafe_allow_privileged_role=unsafe_allow_privileged_role,
        )

    def close(self) -> None:
        """Release pooled database connections (PostgreSQL); the evaluator stays usable."""
        self.database.close()

    def __enter__(self: _Evaluator) -> _Evaluator:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        sql = generated_sql(run, self.output_key)
        reference = read_reference(example)
        outcome = self._outcome(sql, reference, example)
        return EvaluationResult(
            key=self.name,
            score=outcome.score,
            value=outcome.verdict,
            comment=clip_text(outcome.reason, 4_000),
            metadata=outcome.metadata(),
        )

    def _outcome(self, sql: str, reference: Reference, example: Example | None) -> Outcome:
        outcome = Outcome(
            verdict="",
            reason="",
            generated_sql=sql,
            dialect=self.dialect,
            reference_sql=reference.sql,
        )
        if not sql:
            return _ended(outcome, "no_sql", "the run produced no SQL")
        outcome.report = analyze_sql(sql, self.dialect)
        if outcome.report.refusal is not None:
            return _ended(outcome, "refused", f"refused before execution: {outcome.report.refusal}")
        with self.database.session(example) as session:
            outcome.reference = self._reference_result(session, reference, example)
            generated = self._run_generated(session, outcome)
        if generated is None:
            return outcome
        outcome.generated = generated
        self._compare(outcome, reference)
        return outcome

    def _reference_result(
        self, session: Session, reference: Reference, example: Example | None
    ) -> ExecutedResult:
        if reference.sql is None:
            rows = reference.rows or []
            return ExecutedResult(ResultSet(rows=rows, columns=reference.columns, width=reference.width))
        where = f"the reference query of example {example.id if example else '?'}"
        refusal = analyze_sql(reference.sql, self.dialect).refusal
        if refusal is not None:
            raise ReferenceQueryError(f"{where} is not a read-only query ({refusal})")
        try:
            result = session.run(reference.sql)
        except QueryError as exc:
            raise ReferenceQueryError(f"{where} failed: {exc}") from None
        if result.truncated:
            raise ReferenceQueryError(
                f"{where} returned more than max_rows={self.limits.max_rows} rows; raise max_rows"
            )
        return _executed(result)

    def _run_generated(self, session: Session, outcome: Outcome) -> ExecutedResult | None:
        """The generated query's result, or None after recording why it has none."""
        report = outcome.report
        try:
            return _executed(session.run(outcome.generated_sql))
        except QueryTimeoutError as exc:
            _ended(outcome, "timeout", str(exc), error=str(exc))
        except QueryTooLargeError as exc:
            _ended(outcome, "too_large", f"the generated query's result is too large: {exc}", error=str(exc))
        except QueryRefusedError as exc:
            _ended(outcome, "refused", str(exc), error=str(exc))
        except QueryError as exc:
            verdict = "execution_error" if report is not None and report.parsed else "syntax_error"
            _ended(outcome, verdict, f"the generated query failed: {exc}", error=str(exc))
        return None

    def _compare(self, outcome: Outcome, reference: Reference) -> None:
        assert outcome.reference is not None and outcome.generated is not None
        ordered = self._ordered(reference)
        options = CompareOptions(
            ordered=ordered, tolerance=self.float_tolerance, column_matching=self.column_matching
        )
        comparison = compare_results(outcome.reference.result, outcome.generated.result, options)
        outcome.comparison = comparison
        outcome.order_compared = ordered
        if outcome.generated.truncated:
            limit = self.limits.max_rows
            _ended(
                outcome,
                "too_many_rows",
                f"the generated query returned more than max_rows={limit} rows",
            )
            comparison.match = False
        elif comparison.match:
            _ended(outcome, "match", comparison.reason)
        else:
            _ended(outcome, "mismatch", comparison.reason)
        if comparison.matching_budget_exhausted:
            outcome.extra["matching_budget_exhausted"] = True

    def _ordered(self, reference: Reference) -> bool:
        if self.order_sensitive != "auto":
            return bool(self.order_sensitive)
        return reference.sql is not None and analyze_sql(reference.sql, self.dialect).ordered


def _executed(result: QueryResult) -> ExecutedResult:
    rows = [normalize_row(row) for row in result.rows]
    return ExecutedResult(
        ResultSet(rows=rows, columns=result.columns, width=len(result.columns)),
        elapsed_ms=result.elapsed_ms,
        truncated=result.truncated,
    )


def _ended(outcome: Outcome, verdict: str, reason: str, error: str | None = None) -> Outcome:
    outcome.verdict, outcome.reason = verdict, reason
    if error is not None:
        outcome.error = error
    return outcome


def _check_options(
    timeout: float,
    order_sensitive: Any,
    float_tolerance: float,
    column_matching: str,
    max_rows: int,
) -> None:
    if not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if order_sensitive not in ("auto", True, False):
        raise ValueError(f"order_sensitive must be 'auto', True or False, got {order_sensitive!r}")
    if not isinstance(float_tolerance, (int, float)) or not 0 <= float_tolerance < 0.5:
        raise ValueError(f"float_tolerance must be a number in [0, 0.5), got {float_tolerance!r}")
    if column_matching not in COLUMN_MATCHINGS:
        raise ValueError(f"column_matching must be one of {list(COLUMN_MATCHINGS)}, got {column_matching!r}")
    _check_positive_int("max_rows", max_rows)


def _check_positive_int(option: str, value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{option} must be a positive integer, got {value!r}")


class SQLValidityEvaluator(BaseEvaluator):
    """Parse-only check: is the generated SQL one syntactically valid statement?

    Scores 1 for a single statement that parses in ``dialect`` (sqlglot's generic
    dialect when None) and, with ``require_query`` (the default), is a read-only
    query; 0 otherwise, with the parser's message and the risk flags in metadata.
    """

    def __init__(
        self,
        dialect: str | None = None,
        *,
        require_query: bool = True,
        output_key: str | None = None,
        name: str = "sql_validity",
    ) -> None:
        self.dialect = check_dialect(dialect)
        self.require_query = require_query
        self.output_key = output_key
        super().__init__(name=name, dialect=dialect, require_query=require_query)

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        sql = generated_sql(run, self.output_key)
        if not sql:
            return self._result(0, "no_sql", "the run produced no SQL", sql, None)
        report = analyze_sql(sql, self.dialect)
        if not report.parsed:
            return self._result(0, "syntax_error", report.parse_error or "does not parse", sql, report)
        if report.statement_count > 1:
            return self._result(0, "refused", report.refusal or "several statements", sql, report)
        if self.require_query and report.refusal is not None:
            return self._result(0, "refused", report.refusal, sql, report)
        return self._result(1, "valid", f"valid {report.kind} statement", sql, report)

    def _result(
        self, score: int, verdict: str, reason: str, sql: str, report: StaticReport | None
    ) -> EvaluationResult:
        metadata: dict[str, Any] = {
            "verdict": verdict,
            "dialect": self.dialect,
            "generated_sql": sql,
            "flags": list(report.flags) if report else [],
            "static_check": report.as_metadata() if report else None,
        }
        return EvaluationResult(key=self.name, score=score, value=verdict, comment=reason, metadata=metadata)
