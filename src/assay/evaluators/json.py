"""Compatibility path for ``assay.evaluators.text.json``."""

from assay.evaluators.text.json import InvalidJson, JsonEqualityEvaluator, JsonValidityEvaluator, parse_json

__all__ = ["InvalidJson", "JsonEqualityEvaluator", "JsonValidityEvaluator", "parse_json"]
