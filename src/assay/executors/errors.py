"""The executors' errors (a module of their own: the Ray executor and the choice by
environment both raise them, and the choice imports the Ray executor)."""

from __future__ import annotations

from assay.errors import ExecutorError, RayExecutorError

__all__ = ["ExecutorError", "RayExecutorError"]
