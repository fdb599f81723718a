"""The verdict of one SQL execution, and the JSON-safe metadata stored with it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.evaluators.sql._result_equality import Comparison, ResultSet
from assay.evaluators.sql._safety import StaticReport
from assay.evaluators.sql._values import Row, clip_text, row_to_json

# Rows of each result kept in metadata (the counts are always complete).
SAMPLE_ROWS = 20
# A database's error message can quote a value: kept to this many characters.
_MESSAGE_CHARS = 4_000

# value of the EvaluationResult, one word per way a generated query can end
VERDICTS = (
    "match",
    "mismatch",
    "no_sql",
    "syntax_error",
    "refused",
    "execution_error",
    "timeout",
    "too_many_rows",
    "too_large",
)


@dataclass
class ExecutedResult:
    """One query's result as seen by the evaluator."""

    result: ResultSet
    elapsed_ms: float | None = None
    truncated: bool = False

    def as_metadata(self) -> dict[str, Any]:
        rows = self.result.rows
        return {
            "columns": list(self.result.columns) if self.result.columns is not None else None,
            "row_count": len(rows),
            "rows": [row_to_json(row) for row in rows[:SAMPLE_ROWS]],
            "rows_shown": min(len(rows), SAMPLE_ROWS),
            "truncated": self.truncated,
            "elapsed_ms": round(self.elapsed_ms, 3) if self.elapsed_ms is not None else None,
        }


@dataclass
class Outcome:
    verdict: str
    reason: str
    generated_sql: str
    dialect: str
    report: StaticReport | None = None
    reference_sql: str | None = None
    reference: ExecutedResult | None = None
    generated: ExecutedResult | None = None
    comparison: Comparison | None = None
    order_compared: bool = False
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def score(self) -> int:
        return 1 if self.verdict == "match" else 0

    def metadata(self) -> dict[str, Any]:
        comparison = self.comparison
        return {
            "verdict": self.verdict,
            "dialect": self.dialect,
            "generated_sql": self.generated_sql,
            "reference_sql": self.reference_sql,
            "flags": list(self.report.flags) if self.report else [],
            "static_check": self.report.as_metadata() if self.report else None,
            "order_compared": self.order_compared,
            **_partial_credit(comparison),
            "generated": self.generated.as_metadata() if self.generated else None,
            "reference": self.reference.as_metadata() if self.reference else None,
            "missing_rows": _rows(comparison.missing_rows) if comparison else [],
            "unexpected_rows": _rows(comparison.unexpected_rows) if comparison else [],
            "first_order_difference": comparison.first_order_difference if comparison else None,
            "column_mapping": list(comparison.column_mapping)
            if comparison and comparison.column_mapping
            else None,
            "error": clip_text(self.error, _MESSAGE_CHARS) if self.error is not None else None,
            **self.extra,
        }


def _partial_credit(comparison: Comparison | None) -> dict[str, Any]:
    if comparison is None:
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0, "matched_rows": 0}
    return {
        "precision": round(comparison.precision, 6),
        "recall": round(comparison.recall, 6),
        "f1": round(comparison.f1, 6),
        "matched_rows": comparison.matched_rows,
    }


def _rows(rows: list[Row]) -> list[list[Any]]:
    return [row_to_json(row) for row in rows]
