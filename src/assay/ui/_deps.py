"""Fail early, naming the extra, when the web UI's optional dependencies are missing.

``assay.ui`` imports this module first, so ``import assay.ui`` without the extra says
what to install instead of a bare ModuleNotFoundError from deep inside.
"""

from __future__ import annotations

from assay.errors import require_extra

REQUIRED = ("fastapi", "uvicorn", "jinja2")

for _module in REQUIRED:
    require_extra(_module, "ui", feature="the assay web UI")
