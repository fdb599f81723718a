"""Errors the UI turns into 400 and 404 answers, each naming what was wrong."""

from __future__ import annotations

from assay.errors import UIConfigError

__all__ = ["BadRequest", "NotFound", "UIConfigError"]


class BadRequest(ValueError):
    """A query parameter the UI cannot use (named in the message)."""


class NotFound(LookupError):
    """A dataset, experiment or row that does not exist."""
