"""What every request passes through: host and token checks, the write rules (POST
only, from this origin, none at all when read-only), a CSRF session cookie for pages,
and headers that keep a model's output inert even if it ever reached the page unescaped.

Without a token the UI only answers requests addressed to a loopback host name, which
also defeats DNS rebinding (a web page whose own host name resolves to 127.0.0.1).
With a token every request must carry it: ``Authorization: Bearer <token>``, a
``?token=`` query parameter (a page visit then trades it for a cookie and redirects
to the same address without it), or that cookie. HEAD is answered wherever GET is,
by the GET route with the body dropped.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import time
from urllib.parse import urlencode

from starlette.datastructures import URL, MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.ui.csrf import CSRF_COOKIE, CsrfKeys, origin_refusal

__all__ = [
    "COOKIE",
    "GuardMiddleware",
    "READ_METHODS",
    "SECURITY_HEADERS",
    "is_loopback_host",
    "session_value",
]


COOKIE = "assay_ui_session"
READ_METHODS = frozenset({"GET", "HEAD"})

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses (127.0.0.0/8, ::1)."""
    name = host.strip().strip("[]").lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _host_name(header: str) -> str:
    """The host name of a Host header, without its port."""
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def session_value(token: str) -> str:
    """What the cookie holds: derived from the token, so the cookie never is the token."""
    return hmac.new(token.encode(), b"assay-ui-session", hashlib.sha256).hexdigest()


class GuardMiddleware:
    """Host, token and method checks; security and Server-Timing headers; a CSRF
    session cookie on the first page a browser visits."""

    def __init__(self, app: ASGIApp, token: str | None, read_only: bool = True) -> None:
        self.app = app
        self.token = token
        self.read_only = read_only
        self._session = session_value(token) if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request = Request(scope)
        refusal = self._refusal(request)
        send = _with_headers(send, started, scope["path"])
        if refusal is None and _is_page(request) and CSRF_COOKIE not in request.cookies:
            session = CsrfKeys.new_session()
            scope.setdefault("state", {})["csrf_session"] = session
            send = _with_cookie(send, session)
        if refusal is not None:
            await refusal(scope, receive, send)
        elif scope["method"] == "HEAD":
            await self.app({**scope, "method": "GET"}, receive, _without_body(send))
        else:
            await self.app(scope, receive, send)

    def _refusal(self, request: Request) -> Response | None:
        if request.method not in READ_METHODS:
            return self._write_refusal(request) or self._access_refusal(request)
        return self._access_refusal(request)

    def _write_refusal(self, request: Request) -> Response | None:
        if self.read_only:
            return PlainTextResponse(
                "the assay UI is read-only (started with --read-only): only GET and HEAD are allowed",
                405,
                headers={"Allow": "GET, HEAD"},
            )
        if request.method != "POST":
            return PlainTextResponse(
                "the assay UI writes with POST only", 405, headers={"Allow": "GET, HEAD, POST"}
            )
        refused = origin_refusal(request)
        return None if refused is None else PlainTextResponse(refused, 403)

    def _access_refusal(self, request: Request) -> Response | None:
        if self.token is None:
            host = request.headers.get("host", "")
            if not is_loopback_host(_host_name(host)):
                return PlainTextResponse(
                    f"refused: Host {host!r} is not a loopback address; this UI serves "
                    "127.0.0.1 only unless it was started with a token",
                    403,
                )
            return None
        return self._token_refusal(request)

    def _token_refusal(self, request: Request) -> Response | None:
        assert self.token is not None and self._session is not None
        query_token = request.query_params.get("token")
        if query_token is not None and _same(query_token, self.token):
            if _is_page(request):
                return _trade_for_cookie(request, self._session)
            return None
        bearer = request.headers.get("authorization", "")
        if bearer.lower().startswith("bearer ") and _same(bearer[7:].strip(), self.token):
            return None
        if _same(request.cookies.get(COOKIE, ""), self._session):
            return None
        return _unauthorized(request)


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode(), expected.encode())


def _is_page(request: Request) -> bool:
    path = request.url.path
    return request.method == "GET" and not path.startswith(("/api/", "/static/"))


def _trade_for_cookie(request: Request, session: str) -> Response:
    """Set the session cookie and drop the token from the address bar and history."""
    query = urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "token"])
    location = URL(path=request.url.path, query=query)
    response = RedirectResponse(str(location), status_code=303)
    response.set_cookie(COOKIE, session, httponly=True, samesite="strict", path="/")
    return response


def _unauthorized(request: Request) -> Response:
    message = (
        "this assay UI needs its token: open it once with ?token=<token>, "
        "or send the header 'Authorization: Bearer <token>'"
    )
    headers = {"WWW-Authenticate": "Bearer"}
    if request.url.path.startswith("/api/"):
        return JSONResponse({"detail": message}, status_code=401, headers=headers)
    return PlainTextResponse(message, status_code=401, headers=headers)


def _without_body(send: Send) -> Send:
    """HEAD is GET without the body: the routes answer GET, the headers go out unchanged."""

    async def send_headers_only(message: Message) -> None:
        if message["type"] == "http.response.body":
            message = {**message, "body": b""}
        await send(message)

    return send_headers_only


def _with_cookie(send: Send, session: str) -> Send:
    """The new CSRF session's cookie on the page that issued it."""

    async def send_with_cookie(message: Message) -> None:
        if message["type"] == "http.response.start":
            cookie = f"{CSRF_COOKIE}={session}; HttpOnly; Path=/; SameSite=strict"
            MutableHeaders(scope=message).append("set-cookie", cookie)
        await send(message)

    return send_with_cookie


def _with_headers(send: Send, started: float, path: str) -> Send:
    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for name, value in SECURITY_HEADERS.items():
                headers.setdefault(name, value)
            if not path.startswith("/static/"):
                headers.setdefault("Cache-Control", "no-store")
            elapsed = (time.perf_counter() - started) * 1000
            headers.append("Server-Timing", f"app;dur={elapsed:.1f}")
        await send(message)

    return send_with_headers
