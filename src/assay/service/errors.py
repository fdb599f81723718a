"""The evaluator service's errors (also importable from ``assay.errors``)."""

from __future__ import annotations

from assay.errors import AssayError

__all__ = ["EvaluatorSpecError", "RemoteEvaluatorError", "ServiceConfigError", "WireError"]


class EvaluatorSpecError(AssayError, ValueError):
    """A ``MODULE:EVALUATORS`` spec that does not name a usable set of evaluators."""


class ServiceConfigError(AssayError, ValueError):
    """A service setting refused for safety (a public host without a token, a weak token)."""


class RemoteEvaluatorError(AssayError, RuntimeError):
    """The service could not give a result: refused, unreachable, or failing after retries."""


class WireError(AssayError, ValueError):
    """A reply that is not the service's JSON (names what was wrong)."""
