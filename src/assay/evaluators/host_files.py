"""Whether an evaluator may open a host file that its input names by path.

Locally a ``{"path": "/data/in.csv"}`` input is a convenience; over the evaluator service
the caller is someone else, and a path would let them read the service's own files back
(in a log, a diff, an error). The service runs every evaluation inside
``host_paths_refused()``; evaluators that accept paths ask ``refuse_if_remote`` first.
A context variable, so it follows the evaluation into ``asyncio.to_thread`` and tasks.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from assay.errors import HostPathRefusedError

# the names before 0.1.0 (assay.errors.ALIASES), still importable from here
HostPathRefused = HostPathRefusedError


__all__ = ["HostPathRefusedError", "host_paths_refused", "refuse_if_remote"]

_ALLOWED: ContextVar[bool] = ContextVar("assay_host_paths_allowed", default=True)


@contextmanager
def host_paths_refused() -> Iterator[None]:
    """Evaluations inside refuse inputs given by host path."""
    token = _ALLOWED.set(False)
    try:
        yield
    finally:
        _ALLOWED.reset(token)


def refuse_if_remote(where: str) -> None:
    """Raise ``HostPathRefusedError`` inside ``host_paths_refused()``."""
    if not _ALLOWED.get():
        raise HostPathRefusedError(
            f"{where}: inputs by host path are refused by the evaluator service (it would "
            "open the service's own files); send the content in the request instead "
            "(text, rows, or {'base64': ...})"
        )
