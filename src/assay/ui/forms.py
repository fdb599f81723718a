"""What every write reads first: its urlencoded form, bounded in size, and its CSRF token."""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.requests import Request

from assay.errors import CsrfRefusedError
from assay.ui.csrf import CSRF_COOKIE, CSRF_FIELD, CSRF_HEADER, CsrfKeys
from assay.ui.errors import BadRequest

__all__ = ["MAX_FORM_BYTES", "Forbidden", "checked_form", "local_target"]

MAX_FORM_BYTES = 4 * 1024 * 1024  # an uploaded dataset's text rides in a form too


Forbidden = CsrfRefusedError  # the name the UI's routes use


async def checked_form(request: Request) -> dict[str, str]:
    """The form, once its CSRF token fits this browser's session cookie."""
    form = await _form(request)
    keys: CsrfKeys = request.app.state.csrf
    given = form.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER)
    if not keys.valid(request.cookies.get(CSRF_COOKIE), given):
        raise Forbidden(
            "refused: this form's token does not match your browser session (the page is from "
            "before a restart of the server, or from another site); reload the page and try again"
        )
    return form


async def _form(request: Request) -> dict[str, str]:
    """A urlencoded form, bounded in size; a repeated field keeps its first value."""
    if not request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        raise BadRequest("a write must be a form (application/x-www-form-urlencoded)")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise BadRequest(f"the form is larger than {MAX_FORM_BYTES // (1024 * 1024)} MiB")
    form: dict[str, str] = {}
    pairs = parse_qsl(bytes(body).decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=200)
    for name, value in pairs:
        form.setdefault(name, value)
    return form


def local_target(target: str | None) -> str | None:
    """A redirect target on this server only (a path, never another host)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return None
    return target
