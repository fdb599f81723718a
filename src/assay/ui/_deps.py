"""Fail early, naming the extra, when the web UI's optional dependencies are missing.

``assay.ui`` imports this module first, so ``import assay.ui`` without the extra says
what to install instead of a bare ModuleNotFoundError from deep inside.
"""

from __future__ import annotations

import importlib.util

REQUIRED = ("fastapi", "uvicorn", "jinja2")

MISSING = [name for name in REQUIRED if importlib.util.find_spec(name) is None]
if MISSING:
    raise ImportError(f"the assay web UI needs {', '.join(MISSING)}: install it with pip install 'assay[ui]'")
