"""Embedding distance between the output and the reference (semantic similarity).

The score is a *distance*, as in LangChain's evaluator (0 = same meaning); for cosine,
``metadata["similarity"]`` is ``1 - distance``. Vectors are cached in the store.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

from assay.embeddings.base import Embeddings, Vector
from assay.embeddings.cache import CachedEmbeddings
from assay.embeddings.resolve import EmbeddingsSpec, resolve_embeddings
from assay.evaluators._fields import ReferenceEvaluator, as_text
from assay.schemas import EvaluationResult, Example, Run

__all__ = [
    "DISTANCES",
    "DistanceName",
    "EmbeddingDistanceEvaluator",
    "chebyshev_distance",
    "cosine_distance",
    "euclidean_distance",
    "hamming_distance",
    "manhattan_distance",
]


DistanceName = Literal["cosine", "euclidean", "manhattan", "chebyshev", "hamming"]


def cosine_distance(a: Vector, b: Vector) -> float:
    if a == b:
        return 0.0  # exactly: 1 - cos(a, a) is 2.2e-16 in floating point
    norms = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    if norms == 0.0:
        return 0.0 if a == b else 1.0
    similarity = math.fsum(x * y for x, y in zip(a, b)) / norms
    return 1.0 - max(-1.0, min(1.0, similarity))


def euclidean_distance(a: Vector, b: Vector) -> float:
    return math.dist(a, b)


def manhattan_distance(a: Vector, b: Vector) -> float:
    return math.fsum(abs(x - y) for x, y in zip(a, b))


def chebyshev_distance(a: Vector, b: Vector) -> float:
    return max((abs(x - y) for x, y in zip(a, b)), default=0.0)


def hamming_distance(a: Vector, b: Vector) -> float:
    """The share of positions that differ (LangChain's definition)."""
    return sum(1 for x, y in zip(a, b) if x != y) / len(a) if a else 0.0


DISTANCES: dict[str, Callable[[Vector, Vector], float]] = {
    "cosine": cosine_distance,
    "euclidean": euclidean_distance,
    "manhattan": manhattan_distance,
    "chebyshev": chebyshev_distance,
    "hamming": hamming_distance,
}


_RANGES: dict[str, tuple[float | None, float | None]] = {"cosine": (0.0, 2.0), "hamming": (0.0, 1.0)}


class EmbeddingDistanceEvaluator(ReferenceEvaluator):
    """``EmbeddingDistanceEvaluator(distance="cosine", embeddings=None)``.

    ``embeddings``: an ``Embeddings`` provider (``OpenAIEmbeddings(...)``,
    ``SentenceTransformerEmbeddings()``), ``"local"``, ``"openai:<model>"``, or None for the
    default (see ``assay.embeddings.resolve``). The provider is checked when the evaluator
    is built, so a missing extra fails at once rather than on every row. ``cache=False``
    skips the store cache.
    """

    default_name = "embedding_distance"
    direction = "lower"

    def __init__(
        self,
        distance: DistanceName = "cosine",
        embeddings: EmbeddingsSpec = None,
        *,
        cache: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        measure = DISTANCES.get(distance)
        if measure is None:
            raise ValueError(
                f"EmbeddingDistanceEvaluator(distance={distance!r}) is not supported; "
                f"choose one of: {', '.join(DISTANCES)}"
            )
        self.distance = distance
        self.score_range = _RANGES.get(distance, (0.0, None))
        self._measure = measure
        provider = resolve_embeddings(embeddings)
        self.embeddings: Embeddings = CachedEmbeddings(provider) if cache else provider

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        prediction = as_text(self.prediction(run))
        reference = as_text(self.reference(example))
        first, second = self.embeddings.embed([prediction, reference])
        if len(first) != len(second):
            raise ValueError(f"the embeddings have different sizes ({len(first)} and {len(second)})")
        # The same text is at distance exactly 0 (a model may embed it twice slightly apart).
        score = 0.0 if prediction == reference else self._measure(first, second)
        metadata: dict[str, Any] = {"distance": self.distance, "model": self.embeddings.model_id}
        if self.distance == "cosine":
            metadata["similarity"] = 1.0 - score
        return self.result(score, metadata=metadata)
