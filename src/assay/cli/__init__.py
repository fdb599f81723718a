"""The ``assay`` command: one module per command group, ``main`` in ``_main``."""

from assay.cli._main import main

__all__ = ["main"]
