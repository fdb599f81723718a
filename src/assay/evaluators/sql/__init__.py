"""SQL evaluators: execution accuracy on a real database, and validity without one."""

from assay.evaluators.sql._evaluator import SQLExecutionEvaluator, SQLValidityEvaluator

__all__ = ["SQLExecutionEvaluator", "SQLValidityEvaluator"]
