"""The embeddings provider interface: texts in, one vector per text out."""

from __future__ import annotations

import abc
from collections.abc import Sequence

from assay.errors import EmbeddingsError, EmbeddingsUnavailableError

# the names before 0.1.0 (assay.errors.ALIASES), still importable from here
EmbeddingsUnavailable = EmbeddingsUnavailableError

__all__ = ["Embeddings", "EmbeddingsError", "EmbeddingsUnavailableError", "Vector", "check_vectors"]


Vector = list[float]


class Embeddings(abc.ABC):
    """Subclass and implement ``embed``; ``model_id`` names the model for the cache.

    Two providers with the same ``model_id`` must give the same vectors for the same text:
    cached vectors are shared between them.
    """

    model_id: str

    @abc.abstractmethod
    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One vector per text, in order."""

    def embed_one(self, text: str) -> Vector:
        return self.embed([text])[0]


def check_vectors(vectors: Sequence[Sequence[float]], expected: int, source: str) -> list[Vector]:
    """Plain float lists, one per text, all of one dimension."""
    if len(vectors) != expected:
        raise EmbeddingsError(f"{source} returned {len(vectors)} vectors for {expected} texts")
    checked = [[float(x) for x in vector] for vector in vectors]
    sizes = {len(vector) for vector in checked}
    if len(sizes) > 1 or 0 in sizes:
        raise EmbeddingsError(f"{source} returned vectors of sizes {sorted(sizes)}")
    return checked
