"""The one way a caught exception becomes the traceback text stored with an error."""

from __future__ import annotations

import traceback

__all__ = ["format_traceback"]


def format_traceback(exc: BaseException) -> str:
    """``exc`` with its traceback and chained causes, as ``traceback.print_exception`` prints it."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
