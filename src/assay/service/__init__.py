"""Evaluators as a service: ``assay serve-evaluators`` serves named evaluators over HTTP,
``RemoteEvaluator`` calls one from ``evaluate()`` like a local evaluator.

The client needs ``assay[judge]`` (its HTTP transport); the server ``assay[service]``.
Every name loads on first use: the client never imports FastAPI, the CLI neither.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.errors import RemoteEvaluatorError, ServiceConfigError
    from assay.service.app import create_app
    from assay.service.client import RemoteEvaluator
    from assay.service.server import ServiceThread, serve

_LAZY = {
    "RemoteEvaluator": "assay.service.client",
    "RemoteEvaluatorError": "assay.service.errors",
    "create_app": "assay.service.app",
    "serve": "assay.service.server",
    "ServiceConfigError": "assay.service.errors",
    "ServiceThread": "assay.service.server",
}

__all__ = [
    "RemoteEvaluator",
    "RemoteEvaluatorError",
    "ServiceConfigError",
    "ServiceThread",
    "create_app",
    "serve",
]


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module 'assay.service' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
