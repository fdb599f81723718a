"""Errors and warnings of the sandbox."""

from __future__ import annotations

from assay.errors import AssayError

__all__ = ["SandboxError", "SandboxIsolationWarning", "SandboxStartError", "SandboxUnavailable"]


class SandboxError(AssayError, RuntimeError):
    """The sandbox itself failed (not the code running in it)."""


class SandboxUnavailable(SandboxError):
    """No backend can run here, or none meets the required isolation level."""


class SandboxStartError(SandboxError):
    """A sandbox process did not come up; the message carries its stderr."""


class SandboxIsolationWarning(UserWarning):
    """The sandbox in use lacks some protections (emitted once per backend)."""
