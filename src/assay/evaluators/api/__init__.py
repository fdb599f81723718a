"""Generated API-calling code, run in the sandbox against a mock of an OpenAPI API."""

from assay.errors import OpenAPIError
from assay.evaluators.api._evaluator import APICallEvaluator

__all__ = ["APICallEvaluator", "OpenAPIError"]
