"""From what a user passes as ``embeddings=`` to a provider.

- an ``Embeddings`` instance: used as is;
- ``"local"`` or ``"all-MiniLM-L6-v2"``: the bundled sentence-transformers model;
- ``"openai"`` or ``"openai:<model>"``: an OpenAI-compatible endpoint (``OPENAI_BASE_URL``);
- ``None``: ``ASSAY_EMBEDDINGS`` if set (one of the strings above), else the local model
  when the ``embeddings`` extra is installed, else the endpoint when ``OPENAI_BASE_URL`` or
  ``OPENAI_API_KEY`` is set, else a clear error.
"""

from __future__ import annotations

import os

from assay.embeddings.base import Embeddings
from assay.embeddings.local import INSTALL_HINT, SentenceTransformerEmbeddings, local_model_available
from assay.embeddings.openai_compatible import DEFAULT_MODEL, OpenAIEmbeddings
from assay.errors import EmbeddingsUnavailableError

__all__ = ["ENV", "EmbeddingsSpec", "resolve_embeddings"]


ENV = "ASSAY_EMBEDDINGS"
EmbeddingsSpec = Embeddings | str | None


def resolve_embeddings(spec: EmbeddingsSpec = None) -> Embeddings:
    if isinstance(spec, Embeddings):
        return spec
    if spec is None:
        spec = os.environ.get(ENV) or _default_spec()
    if not isinstance(spec, str):
        raise TypeError(f"embeddings= must be an Embeddings provider or a string, got {type(spec).__name__}")
    return _from_string(spec)


def _default_spec() -> str:
    if local_model_available():
        return "local"
    if os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_KEY"):
        return "openai"
    raise EmbeddingsUnavailableError(
        "no embeddings provider: install the local model (" + INSTALL_HINT + "), or set "
        "OPENAI_BASE_URL / OPENAI_API_KEY for an OpenAI-compatible /embeddings endpoint, or "
        "pass embeddings=OpenAIEmbeddings(model=..., base_url=...)"
    )


def _from_string(spec: str) -> Embeddings:
    kind, _, model = spec.partition(":")
    if kind in ("local", "sentence-transformers", "all-MiniLM-L6-v2") and not model:
        if not local_model_available():
            raise EmbeddingsUnavailableError(
                f"embeddings={spec!r} needs the embeddings extra: " + INSTALL_HINT
            )
        return SentenceTransformerEmbeddings()
    if kind == "openai":
        return OpenAIEmbeddings(model or DEFAULT_MODEL)
    raise ValueError(
        f"unknown embeddings {spec!r}: use 'local', 'openai', 'openai:<model>' or an Embeddings instance"
    )
