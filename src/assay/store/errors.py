"""Errors the store raises, each naming what was wrong."""

from assay.errors import AssayError

__all__ = ["AlreadyExistsError", "NotFoundError", "StoreError", "StoreVersionError"]


class StoreError(AssayError, RuntimeError):
    """Base class for store errors."""


class StoreVersionError(StoreError):
    """The database was written by a newer assay."""


class NotFoundError(StoreError, LookupError):
    """A dataset, example or experiment that does not exist."""


class AlreadyExistsError(StoreError):
    """A name that is already taken."""
