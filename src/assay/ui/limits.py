"""What bounds the server's memory: few heavy requests at a time, and memory given back.

A compare request reads two or more whole experiments; forty at once would each hold
their own copy. At most ``limit`` run together; the others are answered 503 with
``Retry-After`` at once (waiting would hold their connections and sockets). After a
heavy request glibc is asked to return freed memory to the system, so one burst does
not leave the process at its peak.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable

import anyio.to_thread
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["DEFAULT_HEAVY_LIMIT", "HEAVY_PATHS", "HeavyRequestLimit"]

HEAVY_PATHS = ("/compare", "/api/compare")
DEFAULT_HEAVY_LIMIT = 2


def _malloc_trim() -> Callable[[], None] | None:
    """glibc's ``malloc_trim(0)``, or None where the C library has none (musl, macOS)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    trim = getattr(ctypes.CDLL(name), "malloc_trim", None)
    if trim is None:
        return None
    return lambda: trim(0) and None


_TRIM = _malloc_trim()


class HeavyRequestLimit:
    """At most ``limit`` requests to the heavy paths at once; 503 past it."""

    def __init__(self, app: ASGIApp, limit: int = DEFAULT_HEAVY_LIMIT) -> None:
        self.app = app
        self.limit = limit
        self.running = 0  # touched only on the event loop's thread

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") not in HEAVY_PATHS:
            await self.app(scope, receive, send)
            return
        if self.running >= self.limit:
            await _busy(scope)(scope, receive, send)
            return
        self.running += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.running -= 1
            if _TRIM is not None and self.running == 0:
                await anyio.to_thread.run_sync(_TRIM)


def _busy(scope: Scope) -> Response:
    message = "the server is busy with other comparisons: retry in a moment"
    headers = {"Retry-After": "1"}
    if scope["path"].startswith("/api/"):
        return JSONResponse({"detail": message}, status_code=503, headers=headers)
    return PlainTextResponse(message, status_code=503, headers=headers)
