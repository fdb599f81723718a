"""The store of the experiment in progress, for evaluators that cache (judges, embeddings).

The runner sets it for the duration of an experiment; outside one, the default store is used.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from assay.store.base import Store

__all__ = ["current_store", "in_experiment", "use_store"]


_current: contextvars.ContextVar[Store | None] = contextvars.ContextVar("assay_current_store", default=None)
_default: Store | None = None


@contextmanager
def use_store(store: Store) -> Iterator[Store]:
    token = _current.set(store)
    try:
        yield store
    finally:
        _current.reset(token)


def current_store() -> Store:
    """The running experiment's store, else the default store (``ASSAY_DATABASE_URL``)."""
    global _default
    store = _current.get()
    if store is not None:
        return store
    if _default is None:
        from assay.store.open import open_store

        _default = open_store()
    return _default


def in_experiment() -> bool:
    """Whether an experiment (a run, a rescore, a comparison) is running in this context:
    its evaluators' traced calls are not traces of their own (``assay.tracing``)."""
    return _current.get() is not None
