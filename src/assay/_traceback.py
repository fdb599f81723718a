"""The one way a caught exception becomes the traceback text stored with an error."""

from __future__ import annotations

import traceback

__all__ = ["describe", "format_traceback"]


def describe(exc: BaseException) -> str:
    """``"ValueError: message"``: the one-line form of a caught exception, whatever its
    ``__str__`` does (one that raises must not turn a failed row into a failed run)."""
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - user code's exception, user code's __str__
        message = "<the exception's message could not be read>"
    return f"{type(exc).__name__}: {message}"


def format_traceback(exc: BaseException) -> str:
    """``exc`` with its traceback and chained causes, as ``traceback.print_exception`` prints it."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
