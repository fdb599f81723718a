"""Errors and warnings of the sandbox."""

from __future__ import annotations

from assay.errors import SandboxError, SandboxStartError, SandboxUnavailableError

# the names before 0.1.0 (assay.errors.ALIASES), still importable from here
SandboxUnavailable = SandboxUnavailableError

__all__ = ["SandboxError", "SandboxIsolationWarning", "SandboxStartError", "SandboxUnavailableError"]


class SandboxIsolationWarning(UserWarning):
    """The sandbox in use lacks some protections (emitted once per backend)."""
