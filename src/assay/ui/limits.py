"""What bounds the server's memory: few heavy requests at a time, and memory given back.

A compare request reads two or more whole experiments; forty at once would each hold
their own copy. Identical requests (same path and query) arriving while one is being
answered wait for it and get its answer: computed once, however many ask. At most
``limit`` distinct ones run together; the others are answered 503 with ``Retry-After``
at once (waiting would hold their connections and sockets). After a heavy request glibc
is asked to return freed memory to the system, so one burst does not leave the process
at its peak.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable

import anyio
import anyio.to_thread
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

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


class _Flight:
    """One heavy request being answered: what it sent, once it was all sent."""

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.messages: list[Message] | None = None  # None: it failed (or is not done)


class HeavyRequestLimit:
    """At most ``limit`` distinct requests to the heavy paths at once; 503 past it.
    Identical ones share the answer of the one running."""

    def __init__(self, app: ASGIApp, limit: int = DEFAULT_HEAVY_LIMIT) -> None:
        self.app = app
        self.limit = limit
        self.running = 0  # touched only on the event loop's thread, as are the two below
        self.waiting = 0  # requests waiting for an identical one's answer
        self._flights: dict[tuple[str, str, bytes], _Flight] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"].rstrip("/") if scope["type"] == "http" else ""
        if path not in HEAVY_PATHS:
            await self.app(scope, receive, send)
            return
        key = (scope["method"], path, scope.get("query_string", b""))
        while (flight := self._flights.get(key)) is not None:
            self.waiting += 1
            try:
                await flight.done.wait()
            finally:
                self.waiting -= 1
            if flight.messages is not None:
                for message in flight.messages:
                    await send(message)
                return
            # it failed (or its client left mid-answer): the first woken answers anew
        if self.running >= self.limit:
            await _busy(scope)(scope, receive, send)
            return
        await self._lead(key, scope, receive, send)

    async def _lead(self, key: tuple[str, str, bytes], scope: Scope, receive: Receive, send: Send) -> None:
        """Answer the request, recording what is sent for identical requests that arrive
        meanwhile."""
        flight = self._flights[key] = _Flight()
        sent: list[Message] = []

        async def recording(message: Message) -> None:
            sent.append(message)
            await send(message)

        self.running += 1
        try:
            await self.app(scope, receive, recording)
            flight.messages = sent
        finally:
            self.running -= 1
            if self._flights.get(key) is flight:
                del self._flights[key]
            flight.done.set()
            if _TRIM is not None and self.running == 0:
                await anyio.to_thread.run_sync(_TRIM)


def _busy(scope: Scope) -> Response:
    message = "the server is busy with other comparisons: retry in a moment"
    headers = {"Retry-After": "1"}
    if scope["path"].startswith("/api/"):
        return JSONResponse({"detail": message}, status_code=503, headers=headers)
    return PlainTextResponse(message, status_code=503, headers=headers)
