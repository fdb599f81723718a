"""Embeddings cached in the store (``cache_get``/``cache_put``), content-addressed.

The key is a hash of the provider's ``model_id`` and the text, so a re-run, or another
evaluator embedding the same text with the same model, costs no call. The store is the
running experiment's (``current_store()``) unless one is given.
"""

from __future__ import annotations

import hashlib
import sys
from array import array
from collections.abc import Sequence

from assay.embeddings.base import Embeddings, Vector
from assay.store.base import Store

__all__ = ["CachedEmbeddings", "NAMESPACE", "cache_key", "decode_vector", "encode_vector"]


NAMESPACE = "embeddings"


def cache_key(model_id: str, text: str) -> str:
    return hashlib.sha256(f"{model_id}\x00{text}".encode()).hexdigest()


def encode_vector(vector: Vector) -> bytes:
    """Little-endian float64s: exact, and compact next to JSON."""
    packed = array("d", vector)
    if sys.byteorder != "little":  # pragma: no cover - no big-endian machine here
        packed.byteswap()
    return packed.tobytes()


def decode_vector(data: bytes) -> Vector:
    packed = array("d")
    packed.frombytes(data)
    if sys.byteorder != "little":  # pragma: no cover
        packed.byteswap()
    return packed.tolist()


class CachedEmbeddings(Embeddings):
    """``inner`` with its vectors kept in the store; only unseen texts reach ``inner``."""

    def __init__(self, inner: Embeddings, store: Store | None = None) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self._store = store

    def __repr__(self) -> str:
        return f"CachedEmbeddings({self.inner!r})"

    def store(self) -> Store:
        if self._store is not None:
            return self._store
        from assay.store.current import current_store

        return current_store()

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        store = self.store()
        keys = [cache_key(self.model_id, text) for text in texts]
        found: dict[str, Vector] = {}
        for key in dict.fromkeys(keys):
            data = store.cache_get(NAMESPACE, key)
            if data is not None:
                found[key] = decode_vector(data)
        missing = {key: text for key, text in zip(keys, texts) if key not in found}
        if missing:
            vectors = self.inner.embed(list(missing.values()))
            for key, vector in zip(missing, vectors):
                store.cache_put(NAMESPACE, key, encode_vector(vector))
                found[key] = vector
        return [found[key] for key in keys]
