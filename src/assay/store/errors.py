"""Errors the store raises, each naming what was wrong."""

from assay.errors import AlreadyExistsError, NotFoundError, StoreError, StoreVersionError

__all__ = ["AlreadyExistsError", "NotFoundError", "StoreError", "StoreVersionError"]
