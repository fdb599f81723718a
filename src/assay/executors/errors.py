"""The executors' errors (a module of their own: the Ray executor and the choice by
environment both raise them, and the choice imports the Ray executor)."""

from __future__ import annotations

from assay.errors import AssayError

__all__ = ["ExecutorError", "RayExecutorError"]


class ExecutorError(AssayError, ValueError):
    """An executor was misconfigured (an unknown ``ASSAY_EXECUTOR``, a bad argument)."""


class RayExecutorError(AssayError, RuntimeError):
    """The Ray run could not go on: a batch's workers kept dying, the target could not be
    sent to the workers, or the workers could not load it."""
