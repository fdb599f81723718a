"""Compatibility path for ``assay.evaluators.text.json``."""

from assay.errors import InvalidJson
from assay.evaluators.text.json import JsonEqualityEvaluator, JsonValidityEvaluator, parse_json

__all__ = ["InvalidJson", "JsonEqualityEvaluator", "JsonValidityEvaluator", "parse_json"]
