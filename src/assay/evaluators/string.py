"""Compatibility path for ``assay.evaluators.text.string``."""

from assay.evaluators.text.string import ExactMatchEvaluator, RegexEvaluator, StringDistanceEvaluator

__all__ = ["ExactMatchEvaluator", "RegexEvaluator", "StringDistanceEvaluator"]
