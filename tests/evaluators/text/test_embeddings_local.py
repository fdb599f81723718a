"""The local all-MiniLM-L6-v2 model from the ``embeddings`` extra: offline, real vectors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.embeddings import SentenceTransformerEmbeddings
from assay.embeddings.cache import NAMESPACE, cache_key
from assay.evaluators.text.embedding import EmbeddingDistanceEvaluator
from assay.store import Store

pytestmark = pytest.mark.slow

OFFLINE_SCRIPT = """
import json
from assay.evaluators.text.embedding import EmbeddingDistanceEvaluator
from assay.schemas import Example, Run
from assay.store import open_store
from assay.store.current import use_store

evaluator = EmbeddingDistanceEvaluator()
with use_store(open_store("sqlite://")):
    def distance(a, b):
        result = evaluator.evaluate(Run(outputs={"output": a}), Example(outputs={"output": b}))
        assert result.error is None, result.error
        return result.score
    print(json.dumps({
        "model": evaluator.embeddings.model_id,
        "paraphrase": distance("The cat sat on the mat.", "A cat was sitting on the rug."),
        "unrelated": distance("The cat sat on the mat.", "Quarterly revenue grew by five percent."),
    }))
"""


def test_loads_offline_with_no_hub_access(tmp_path: Path) -> None:
    """A fresh interpreter, an empty Hugging Face cache, the hub marked offline and every
    proxy pointing at a closed port: the bundled model still loads and embeds."""
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "ASSAY_DATABASE_URL": str(tmp_path / "unused.db"),
    }
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE_SCRIPT], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["model"] == "sentence-transformers:all-MiniLM-L6-v2:raw"
    assert figures["paraphrase"] < 0.4 < 0.8 < figures["unrelated"]
    assert not (tmp_path / "hf").exists() or not any((tmp_path / "hf").rglob("*.safetensors"))


@pytest.fixture(scope="module")
def local() -> SentenceTransformerEmbeddings:
    return SentenceTransformerEmbeddings()


def test_vectors_are_384_dimensional_and_deterministic(local: SentenceTransformerEmbeddings) -> None:
    first, second = local.embed(["hello world", "hello world"])
    assert len(first) == 384 and first == second
    normalized = SentenceTransformerEmbeddings(normalize=True)  # shares the loaded model
    vector = normalized.embed_one("hello world")
    assert sum(x * x for x in vector) == pytest.approx(1.0, abs=1e-5)
    assert normalized.model_id != local.model_id  # different vectors, different cache entries


def test_semantic_ranking_through_the_evaluator(
    local: SentenceTransformerEmbeddings, store: Store, run_of: Any, example_of: Any
) -> None:
    evaluator = EmbeddingDistanceEvaluator(embeddings=local)
    reference = example_of("How do I reset my password?")
    close = evaluator.evaluate(run_of("What are the steps to change a forgotten password?"), reference)
    far = evaluator.evaluate(run_of("The weather in Lisbon is sunny today."), reference)
    assert close.score is not None and far.score is not None
    assert close.score < far.score
    assert close.metadata["model"] == "sentence-transformers:all-MiniLM-L6-v2:raw"
    key = cache_key(local.model_id, "How do I reset my password?")
    assert store.cache_get(NAMESPACE, key) is not None


def test_a_missing_model_directory_is_a_clear_error(tmp_path: Path) -> None:
    missing = SentenceTransformerEmbeddings(tmp_path / "nowhere")
    with pytest.raises(ImportError, match="no sentence-transformers model directory"):
        missing.embed(["x"])
