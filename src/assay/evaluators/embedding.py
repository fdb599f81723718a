"""Compatibility path for ``assay.evaluators.text.embedding``."""

from assay.evaluators.text.embedding import (
    EmbeddingDistanceEvaluator,
    chebyshev_distance,
    cosine_distance,
    euclidean_distance,
    hamming_distance,
    manhattan_distance,
)

__all__ = [
    "EmbeddingDistanceEvaluator",
    "chebyshev_distance",
    "cosine_distance",
    "euclidean_distance",
    "hamming_distance",
    "manhattan_distance",
]
