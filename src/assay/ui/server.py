"""``serve()``: run the UI with uvicorn, refusing unsafe settings before binding."""

from __future__ import annotations

import logging
import os
import re
from urllib.parse import unquote, unquote_plus

import uvicorn

from assay.errors import UIConfigError
from assay.store import open_store
from assay.ui.app import create_app
from assay.ui.bind import bind_listening_socket
from assay.ui.security import is_loopback_host

__all__ = [
    "MIN_TOKEN_LENGTH",
    "RedactTokens",
    "TOKEN_ENV",
    "check_bind",
    "redact",
    "resolve_token",
    "serve",
]


TOKEN_ENV = "ASSAY_UI_TOKEN"
MIN_TOKEN_LENGTH = 8


def resolve_token(token: str | None, env: str = TOKEN_ENV, server: str = "UI") -> str | None:
    """The given token, else ``$ASSAY_UI_TOKEN`` (or ``env``), else None; refuses weak tokens.

    ``env`` and ``server`` let another assay server (the evaluator service) share the rule.
    """
    value = token if token is not None else os.environ.get(env)
    if value is None or value == "":
        return None
    if len(value) < MIN_TOKEN_LENGTH or any(ch.isspace() for ch in value):
        raise UIConfigError(
            f"the {server} token must be at least {MIN_TOKEN_LENGTH} characters without spaces "
            f"(from --token or ${env})"
        )
    return value


def check_bind(
    host: str, token: str | None, env: str = TOKEN_ENV, exposure: str = "read every experiment"
) -> None:
    """Refuse a non-loopback host unless a token protects it."""
    if token is None and not is_loopback_host(host):
        raise UIConfigError(
            f"refusing to serve on {host!r} without a token: anyone who reaches that address "
            f"could {exposure}. Bind to 127.0.0.1, or set --token / ${env}"
        )


class RedactTokens(logging.Filter):
    """Keeps the token out of the access log, however a request spelled it."""

    def __init__(self, token: str | None = None) -> None:
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                redact(arg, self.token) if isinstance(arg, str) else arg for arg in record.args
            )
        return True


def redact(text: str, token: str | None = None) -> str:
    """``text`` (a logged path) with every ``token`` parameter's value redacted.

    A parameter is a token parameter when its name, decoded as the app decodes query
    strings (``%74oken``, ``to%6Bken``, ``+token``...), is ``token`` in any case. The
    token itself, in clear or percent-encoded anywhere in the text, redacts the
    whole query and every literal occurrence.
    """
    path, mark, query = text.partition("?")
    if mark:
        query = "".join(_redact_pair(piece) for piece in _SEPARATOR.split(query))
        text = f"{path}?{query}"
    if token and (token in text or token in unquote_plus(text) or token in unquote(text)):
        path, mark, _ = text.partition("?")
        text = path.replace(token, REDACTED) + (f"?{REDACTED}" if mark else "")
    return text


REDACTED = "<redacted>"
_SEPARATOR = re.compile(r"([&;])")


def _redact_pair(piece: str) -> str:
    if piece in ("&", ";"):
        return piece
    name, equals, _ = piece.partition("=")
    decoded = unquote_plus(name)
    for _ in range(3):  # also names encoded more than once: logged, never trusted
        decoded = unquote_plus(decoded)
    if decoded.strip().lower() == "token":
        return f"{name}{equals or '='}{REDACTED}"
    return piece


def serve(
    database_url: str | None = None,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    read_only: bool = False,
) -> None:
    """Serve the UI over the store at ``database_url`` until interrupted (``read_only``:
    with no write route at all, people's feedback included)."""
    token = resolve_token(token)
    check_bind(host, token)
    sock = bind_listening_socket(host, port, "assay ui")  # a busy port: said before anything else
    store = open_store(database_url)
    try:
        config = uvicorn.Config(create_app(store, token=token, read_only=read_only), host=host, port=port)
        logging.getLogger("uvicorn.access").addFilter(RedactTokens(token))
        shown = f"[{host}]" if ":" in host else host
        hint = " (open it once with ?token=<your token>)" if token else ""
        hint += ", read-only" if read_only else ""
        bound = sock.getsockname()[1]  # --port 0: the port the system chose
        print(f"assay UI on http://{shown}:{bound}/ over {store.url}{hint}", flush=True)
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        store.close()
