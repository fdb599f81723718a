"""Moved to ``assay.evaluation._names`` (the binder resolves names; evaluators are imported by name)."""

from assay.errors import UnknownEvaluatorName
from assay.evaluation._names import EVALUATOR_NAMES, resolve_evaluator_name

__all__ = ["EVALUATOR_NAMES", "UnknownEvaluatorName", "resolve_evaluator_name"]
