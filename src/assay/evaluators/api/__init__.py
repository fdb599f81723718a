"""Generated API-calling code, run in the sandbox against a mock of an OpenAPI API."""

from assay.evaluators.api._evaluator import APICallEvaluator
from assay.evaluators.api._openapi import OpenAPIError

__all__ = ["APICallEvaluator", "OpenAPIError"]
