"""Errors and warnings of the sandbox."""

from __future__ import annotations

from assay.errors import SandboxError, SandboxStartError, SandboxUnavailable

__all__ = ["SandboxError", "SandboxIsolationWarning", "SandboxStartError", "SandboxUnavailable"]


class SandboxIsolationWarning(UserWarning):
    """The sandbox in use lacks some protections (emitted once per backend)."""
