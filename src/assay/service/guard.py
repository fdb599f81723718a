"""What every request to the evaluator service passes through, before any evaluator runs.

The host and token rules are the UI's (``assay.ui.security``): without a token only
requests addressed to a loopback host name are answered (which also defeats DNS
rebinding); with a token every request but ``GET /health`` must carry
``Authorization: Bearer <token>``. Unlike the UI, the service takes POST bodies, so this
guard also bounds their size: the whole body is read (up to the limit) before the app
sees it, whether it came with a ``Content-Length`` or chunked.
"""

from __future__ import annotations

import hmac

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.ui.security import SECURITY_HEADERS, is_loopback_host

__all__ = ["DEFAULT_MAX_BODY_BYTES", "ServiceGuard"]

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
PUBLIC_PATHS = frozenset({"/health"})


class _TooLarge(Exception):
    pass


class ServiceGuard:
    """Host and token checks, a request size limit, and no-sniff/no-store headers."""

    def __init__(self, app: ASGIApp, token: str | None, max_body_bytes: int) -> None:
        self.app = app
        self.token = token
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_headers(send)
        request = Request(scope)
        refusal = self._refusal(request)
        if refusal is None:
            try:
                receive = await self._buffered(receive)
            except _TooLarge:
                refusal = _refuse(413, f"the request body is over the limit of {self.max_body_bytes} bytes")
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refusal(self, request: Request) -> Response | None:
        if self.token is None:
            host = request.url.hostname or ""
            if not is_loopback_host(host):
                return _refuse(
                    403,
                    f"refused: Host {request.headers.get('host', '')!r} is not a loopback address; "
                    "this service answers 127.0.0.1 only unless it was started with a token",
                )
        elif request.url.path not in PUBLIC_PATHS and not self._has_token(request):
            return _refuse(
                401,
                "this evaluator service needs its token: send 'Authorization: Bearer <token>'",
                {"WWW-Authenticate": "Bearer"},
            )
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            return _refuse(413, f"the request body is over the limit of {self.max_body_bytes} bytes")
        return None

    def _has_token(self, request: Request) -> bool:
        assert self.token is not None
        bearer = request.headers.get("authorization", "")
        given = bearer[7:].strip() if bearer.lower().startswith("bearer ") else ""
        return hmac.compare_digest(given.encode(), self.token.encode())

    async def _buffered(self, receive: Receive) -> Receive:
        """Read the whole body within the limit; hand the app a replay of it."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break  # the client went away: let the app see the disconnect
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                raise _TooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        replay: list[Message] = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]

        async def replayed() -> Message:
            return replay.pop() if replay else await receive()

        return replayed


def _refuse(status: int, detail: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


def _with_headers(send: Send) -> Send:
    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name, value in SECURITY_HEADERS.items():
                headers.setdefault(name, value)
            headers.setdefault("Cache-Control", "no-store")
        await send(message)

    return send_with_headers
