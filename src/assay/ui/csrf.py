"""Per-session CSRF tokens and the same-origin rule for the UI's few writes.

Every browser gets a random session id in an HttpOnly, SameSite=Strict cookie on its
first page visit. A page's forms carry ``hmac(secret, session id)``: another site can
neither read it nor make a browser send it. A write must carry the token of the cookie
it arrives with, and come from this origin (its ``Origin`` header, else
``Sec-Fetch-Site: same-origin``). The secret is drawn per server process, so a page
left open across a restart asks to be reloaded.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from starlette.requests import Request

__all__ = ["CSRF_COOKIE", "CSRF_FIELD", "CsrfKeys", "csrf_token", "origin_refusal", "writable"]

CSRF_COOKIE = "assay_ui_csrf"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"


class CsrfKeys:
    """The server's secret, and the token each session's pages carry."""

    def __init__(self, secret: bytes | None = None) -> None:
        self._secret = secret or secrets.token_bytes(32)

    @staticmethod
    def new_session() -> str:
        return secrets.token_urlsafe(24)

    def token(self, session: str) -> str:
        return hmac.new(self._secret, session.encode(), hashlib.sha256).hexdigest()

    def valid(self, session: str | None, given: str | None) -> bool:
        if not session or not given:
            return False
        return hmac.compare_digest(self.token(session).encode(), given.encode())


def session_of(request: Request) -> str | None:
    """The session id: the cookie's, or the one the guard just issued with this page."""
    issued = request.scope.get("state", {}).get("csrf_session")
    return issued if isinstance(issued, str) else request.cookies.get(CSRF_COOKIE)


def csrf_token(request: Request) -> str:
    """The token this browser's pages carry in their forms."""
    keys: CsrfKeys = request.app.state.csrf
    session = session_of(request)
    return keys.token(session) if session else ""


def writable(request: Request) -> bool:
    """Whether this server takes writes (not started with --read-only)."""
    return not request.app.state.read_only


def origin_refusal(request: Request) -> str | None:
    """Why a write does not come from a page of this server, or None if it does."""
    host = request.headers.get("host", "")
    origin = request.headers.get("origin")
    if origin is not None and origin != "null":
        allowed = {f"http://{host}", f"https://{host}"}
        return None if origin in allowed else f"refused: a write from origin {origin!r}, not this UI's"
    # The pages' no-referrer policy makes a browser send "Origin: null" with a form; its
    # Sec-Fetch-Site (a header no page can set) still tells where the form was.
    if request.headers.get("sec-fetch-site") == "same-origin":
        return None
    return "refused: a write must come from a page of this UI (no usable Origin header was sent)"
