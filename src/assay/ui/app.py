"""``create_app``: the web UI over a store, as an ASGI application."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from assay.store.base import Store
from assay.store.read import stored_counts
from assay.store.read.database import ReadOnlyDatabase
from assay.ui import api, pages
from assay.ui.annotate import key_routes
from assay.ui.annotate import routes as annotate
from assay.ui.csrf import CsrfKeys
from assay.ui.edit import routes as edit
from assay.ui.errors import BadRequest, NotFound
from assay.ui.forms import Forbidden
from assay.ui.limits import DEFAULT_HEAVY_LIMIT, HeavyRequestLimit
from assay.ui.reading import export
from assay.ui.reading import files as attachment_files
from assay.ui.reading import routes as reading
from assay.ui.security import GuardMiddleware
from assay.ui.templating import make_templates
from assay.ui.text import clean_value

__all__ = ["STATIC", "create_app"]


STATIC = Path(__file__).parent / "static"


class SafeJSONResponse(JSONResponse):
    """JSON whose strings always encode: lone surrogates become U+FFFD."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return super().render(clean_value(content))


def create_app(
    store: Store,
    token: str | None = None,
    *,
    read_only: bool = False,
    max_heavy_requests: int = DEFAULT_HEAVY_LIMIT,
) -> FastAPI:
    """The UI over ``store``. With a token, every request must carry it. People's
    feedback is its only write (from its own pages, with a CSRF token); ``read_only``
    serves no write at all.

    At most ``max_heavy_requests`` comparisons run at once; more answer 503.
    """
    db = ReadOnlyDatabase(store)
    db.builds_text_indexes = True  # a search builds a finished experiment's text index once

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # The read model counts with numpy: imported while the server waits for its first page.
        threading.Thread(target=stored_counts.load_numpy, name="assay-ui-numpy", daemon=True).start()
        yield
        db.close()

    app = FastAPI(
        title="assay UI",
        summary="Datasets, experiments and their rows, read-only.",
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
        lifespan=lifespan,
        default_response_class=SafeJSONResponse,
    )
    app.state.db = db
    app.state.templates = make_templates()
    app.state.read_only = read_only
    app.state.csrf = CsrfKeys()
    app.include_router(api.router)
    app.include_router(pages.router)
    app.include_router(annotate.router)
    app.include_router(edit.pages)
    app.include_router(key_routes.pages)
    app.include_router(export.router)  # before the pages: /compare/export.csv is not a page
    app.include_router(reading.router)
    app.include_router(attachment_files.router)
    if not read_only:
        app.include_router(annotate.writes)
        app.include_router(edit.writes)
        app.include_router(key_routes.writes)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")
    _add_error_pages(app)
    app.add_middleware(HeavyRequestLimit, limit=max_heavy_requests)
    app.add_middleware(GuardMiddleware, token=token, read_only=read_only)  # outermost: refusals cost nothing
    return app


def _add_error_pages(app: FastAPI) -> None:
    async def bad_request(request: Request, exc: Exception) -> Response:
        return _error(request, 400, str(exc))

    async def not_found(request: Request, exc: Exception) -> Response:
        return _error(request, 404, str(exc))

    async def forbidden(request: Request, exc: Exception) -> Response:
        return _error(request, 403, str(exc))

    async def invalid(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        problems = "; ".join(_describe(error) for error in exc.errors())
        return _error(request, 400, f"invalid request: {problems}")

    app.add_exception_handler(BadRequest, bad_request)
    app.add_exception_handler(NotFound, not_found)
    app.add_exception_handler(Forbidden, forbidden)
    app.add_exception_handler(RequestValidationError, invalid)


def _describe(error: object) -> str:
    if not isinstance(error, dict):
        return str(error)
    where = ".".join(str(part) for part in error.get("loc", ()) if part != "query")
    return f"parameter {where!r}: {error.get('msg', 'invalid')}"


def _error(request: Request, status: int, message: str) -> Response:
    if request.url.path.startswith("/api/"):
        return SafeJSONResponse({"detail": message}, status_code=status)
    response: Response = request.app.state.templates.TemplateResponse(
        request, "error.html", {"status": status, "message": message}, status_code=status
    )
    return response
