"""The local web UI: ``serve()`` runs it, ``create_app()`` builds the ASGI app."""

from assay.ui._deps import REQUIRED as _REQUIRED  # noqa: F401  (first: names the "ui" extra)
from assay.ui.app import create_app
from assay.ui.server import serve

__all__ = ["create_app", "serve"]
