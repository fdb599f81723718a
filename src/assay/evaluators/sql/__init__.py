"""SQL evaluators: execution accuracy on a real database, and validity without one.

The evaluators load on first use: the row matcher under them (``_compare``, ``_values``)
serves the data-transformation evaluator too, which must not need sqlglot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.evaluators.sql._evaluator import SQLExecutionEvaluator, SQLValidityEvaluator

__all__ = ["SQLExecutionEvaluator", "SQLValidityEvaluator"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from assay.evaluators.sql import _evaluator

        return getattr(_evaluator, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
