"""EmbeddingDistanceEvaluator over a real loopback OpenAI-compatible /embeddings endpoint."""

from __future__ import annotations

import math
import socket
from typing import Any

import pytest

from assay.embeddings import (
    CachedEmbeddings,
    EmbeddingsError,
    EmbeddingsUnavailableError,
    OpenAIEmbeddings,
    SentenceTransformerEmbeddings,
    resolve_embeddings,
)
from assay.embeddings.cache import NAMESPACE, cache_key, decode_vector, encode_vector
from assay.evaluators.text.embedding import EmbeddingDistanceEvaluator
from assay.llm.retry import RetryPolicy
from assay.store import Store
from assay.testing import FakeOpenAIServer

KEY = "sk-test-secret-1234567890"
FAST_RETRY = RetryPolicy(max_attempts=3, initial_delay=0.01, max_delay=0.05)
VECTORS = {"cat": [1.0, 0.0, 0.0], "kitten": [0.8, 0.6, 0.0], "invoice": [0.0, 0.0, 2.0]}


def embed_known(texts: list[str]) -> list[list[float]]:
    return [VECTORS.get(text, [0.5, 0.5, 0.5]) for text in texts]


@pytest.fixture
def server() -> Any:
    with FakeOpenAIServer(embeddings=embed_known) as running:
        yield running


def provider(base_url: str, **options: Any) -> OpenAIEmbeddings:
    return OpenAIEmbeddings("embed-small", base_url=base_url, api_key=KEY, retry=FAST_RETRY, **options)


def test_cosine_distance_over_the_endpoint(server: FakeOpenAIServer, run_of: Any, example_of: Any) -> None:
    evaluator = EmbeddingDistanceEvaluator(embeddings=provider(server.base_url))
    result = evaluator.evaluate(run_of("kitten"), example_of("cat"))
    assert result.key == "embedding_distance"
    assert result.score == pytest.approx(0.2)  # cos = 0.8
    assert result.metadata["similarity"] == pytest.approx(0.8)
    assert result.metadata["model"].startswith("openai-compatible:http://127.0.0.1:")
    request = server.requests[0]
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": "embed-small", "input": ["kitten", "cat"]}  # one request
    assert request.headers["authorization"] == "Bearer ***"  # a key was sent


@pytest.mark.parametrize(
    ("distance", "expected"),
    [
        ("euclidean", math.sqrt(0.2**2 + 0.6**2)),
        ("manhattan", 0.8),
        ("chebyshev", 0.6),
        ("hamming", 2 / 3),
    ],
)
def test_other_distances(
    distance: Any, expected: float, server: FakeOpenAIServer, run_of: Any, example_of: Any
) -> None:
    evaluator = EmbeddingDistanceEvaluator(distance, embeddings=provider(server.base_url))
    result = evaluator.evaluate(run_of("kitten"), example_of("cat"))
    assert result.score == pytest.approx(expected)
    assert "similarity" not in result.metadata


def test_vectors_are_cached_in_the_store(
    server: FakeOpenAIServer, store: Store, run_of: Any, example_of: Any
) -> None:
    evaluator = EmbeddingDistanceEvaluator(embeddings=provider(server.base_url))
    first = evaluator.evaluate(run_of("kitten"), example_of("cat"))
    again = evaluator.evaluate(run_of("cat"), example_of("kitten"))
    assert again.score == pytest.approx(first.score)
    assert len(server.requests) == 1  # both texts came from the cache
    cached = store.cache_get(NAMESPACE, cache_key(evaluator.embeddings.model_id, "kitten"))
    assert cached is not None and decode_vector(cached) == VECTORS["kitten"]
    evaluator.evaluate(run_of("invoice"), example_of("cat"))
    assert server.requests[-1].body["input"] == ["invoice"]  # only the unseen text is sent


def test_cache_is_per_model_and_can_be_turned_off(
    server: FakeOpenAIServer, run_of: Any, example_of: Any
) -> None:
    EmbeddingDistanceEvaluator(embeddings=provider(server.base_url)).evaluate(
        run_of("cat"), example_of("cat")
    )
    other = OpenAIEmbeddings("embed-large", base_url=server.base_url, api_key=KEY)
    EmbeddingDistanceEvaluator(embeddings=other).evaluate(run_of("cat"), example_of("cat"))
    uncached = EmbeddingDistanceEvaluator(embeddings=provider(server.base_url), cache=False)
    uncached.evaluate(run_of("cat"), example_of("cat"))
    uncached.evaluate(run_of("cat"), example_of("cat"))
    assert [r.body["model"] for r in server.requests] == [
        "embed-small",
        "embed-large",
        "embed-small",
        "embed-small",
    ]
    assert server.requests[0].body["input"] == ["cat"]  # duplicate texts are embedded once


def test_batches_keep_order(scripted: Any) -> None:
    # the server answers each batch with its items in reverse order, as "index" allows
    scripted.reply(200, {"data": [{"index": 1, "embedding": [2.0]}, {"index": 0, "embedding": [1.0]}]})
    scripted.reply(200, {"data": [{"index": 0, "embedding": [3.0]}]})
    vectors = provider(scripted.base_url, batch_size=2).embed(["a", "b", "c"])
    assert vectors == [[1.0], [2.0], [3.0]]
    assert [r["body"]["input"] for r in scripted.requests] == [["a", "b"], ["c"]]


def test_rate_limits_and_server_errors_are_retried(scripted: Any) -> None:
    scripted.reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "0"})
    scripted.reply(503, {"error": {"message": "overloaded"}})
    scripted.reply(200, {"data": [{"index": 0, "embedding": [1.0, 2.0]}]})
    assert provider(scripted.base_url).embed(["x"]) == [[1.0, 2.0]]
    assert len(scripted.requests) == 3


def test_retries_give_up_with_the_last_failure(scripted: Any) -> None:
    for _ in range(3):
        scripted.reply(500, {"error": {"message": "boom"}})
    with pytest.raises(EmbeddingsError, match=r"failed after 3 attempt\(s\): HTTP 500: boom"):
        provider(scripted.base_url).embed(["x"])


def test_a_refusal_is_not_retried_and_never_shows_the_key(
    scripted: Any, run_of: Any, example_of: Any
) -> None:
    scripted.reply(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}})
    evaluator = EmbeddingDistanceEvaluator(embeddings=provider(scripted.base_url))
    result = evaluator.evaluate(run_of("a"), example_of("b"))
    assert result.score is None
    assert "refused the request: HTTP 401: Incorrect API key provided: ***" in result.error
    assert KEY not in result.error and KEY not in result.metadata["traceback"]
    assert len(scripted.requests) == 1
    assert scripted.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"
    assert KEY not in repr(evaluator.embeddings)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"not json", "the reply is not JSON"),
        ({"object": "list"}, "without a 'data' list"),
        ({"data": [{"index": 0, "embedding": [1.0]}]}, "returned 1 vectors for 2 texts"),
        (
            {"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]},
            "vectors of sizes",
        ),
        ({"data": [{"index": 0}, {"index": 1}]}, "malformed data"),
    ],
)
def test_malformed_replies(body: Any, message: str, scripted: Any) -> None:
    for _ in range(3):
        scripted.reply(200, body)
    with pytest.raises(EmbeddingsError, match=message):
        provider(scripted.base_url).embed(["a", "b"])


def test_unreachable_endpoint(run_of: Any, example_of: Any) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    evaluator = EmbeddingDistanceEvaluator(embeddings=provider(f"http://127.0.0.1:{port}/v1"))
    result = evaluator.evaluate(run_of("a"), example_of("b"))
    assert result.score is None and "connection failed (ConnectError)" in result.error


def test_resolving_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    named = resolve_embeddings("openai:text-embedding-3-large")
    assert isinstance(named, OpenAIEmbeddings) and named.model == "text-embedding-3-large"
    assert isinstance(resolve_embeddings("local"), SentenceTransformerEmbeddings)  # not loaded yet
    assert isinstance(resolve_embeddings(None), SentenceTransformerEmbeddings)  # the extra is here
    monkeypatch.setenv("ASSAY_EMBEDDINGS", "openai:e5")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    from_env = resolve_embeddings(None)
    assert isinstance(from_env, OpenAIEmbeddings)
    assert (from_env.model, from_env.base_url) == ("e5", "http://127.0.0.1:1/v1")
    with pytest.raises(ValueError, match="unknown embeddings 'bert'"):
        resolve_embeddings("bert")
    with pytest.raises(ValueError, match="must be an http"):
        OpenAIEmbeddings(base_url="localhost:8000")


def test_without_any_provider_construction_fails_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("assay.embeddings.resolve.local_model_available", lambda: False)
    with pytest.raises(EmbeddingsUnavailableError, match=r"assay\[embeddings\].*OPENAI_BASE_URL"):
        EmbeddingDistanceEvaluator()
    with pytest.raises(EmbeddingsUnavailableError, match="needs the embeddings extra"):
        resolve_embeddings("local")


def test_bad_distance_fails_at_construction(server: FakeOpenAIServer) -> None:
    with pytest.raises(ValueError, match=r"distance='dot'\) is not supported"):
        EmbeddingDistanceEvaluator("dot", embeddings=provider(server.base_url))  # type: ignore[arg-type]


def test_vector_encoding_round_trips_exactly(store: Store) -> None:
    vector = [0.1, -2.5e-300, 1e300, 0.0]
    assert decode_vector(encode_vector(vector)) == vector
    assert len(encode_vector(vector)) == 32


def test_explicit_store_for_the_cache(server: FakeOpenAIServer) -> None:
    from assay.store import open_store

    own = open_store("sqlite://")
    cached = CachedEmbeddings(provider(server.base_url), store=own)
    cached.embed(["cat"])
    assert own.cache_get(NAMESPACE, cache_key(cached.model_id, "cat")) is not None
    own.close()
