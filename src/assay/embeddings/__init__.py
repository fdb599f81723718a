"""Embeddings providers: an OpenAI-compatible endpoint, or a local sentence-transformers model."""

from assay.embeddings.base import Embeddings
from assay.embeddings.cache import CachedEmbeddings
from assay.embeddings.local import SentenceTransformerEmbeddings
from assay.embeddings.openai_compatible import OpenAIEmbeddings
from assay.embeddings.resolve import resolve_embeddings
from assay.errors import EmbeddingsError, EmbeddingsUnavailableError

# the names before 0.1.0 (assay.errors.ALIASES), still importable from here
EmbeddingsUnavailable = EmbeddingsUnavailableError

__all__ = [
    "CachedEmbeddings",
    "Embeddings",
    "EmbeddingsError",
    "EmbeddingsUnavailableError",
    "OpenAIEmbeddings",
    "SentenceTransformerEmbeddings",
    "resolve_embeddings",
]
