"""The store: where datasets, experiments and results live."""

from assay.errors import AlreadyExistsError, NotFoundError, StoreError, StoreVersionError
from assay.store.base import Store
from assay.store.open import default_url, open_store

__all__ = [
    "AlreadyExistsError",
    "NotFoundError",
    "Store",
    "StoreError",
    "StoreVersionError",
    "default_url",
    "open_store",
]
