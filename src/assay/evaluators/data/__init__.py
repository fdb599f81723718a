"""Generated data-transformation scripts, run in the sandbox on the example's files."""

from assay.evaluators.data._evaluator import DataTransformationEvaluator

__all__ = ["DataTransformationEvaluator"]
