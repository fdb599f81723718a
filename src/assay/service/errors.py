"""The evaluator service's errors (also importable from ``assay.errors``)."""

from __future__ import annotations

from assay.errors import EvaluatorSpecError, RemoteEvaluatorError, ServiceConfigError, WireError

__all__ = ["EvaluatorSpecError", "RemoteEvaluatorError", "ServiceConfigError", "WireError"]
