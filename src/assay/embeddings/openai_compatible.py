"""Embeddings from an OpenAI-compatible ``POST {base_url}/embeddings`` endpoint.

OpenAI, vLLM, Ollama, llama.cpp's server, LiteLLM and text-embeddings-inference all speak it.
Defaults come from ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``; the key is sent in the
``Authorization`` header only and scrubbed from every error message.
"""

from __future__ import annotations

import json
import os
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from assay.embeddings.base import Embeddings, Vector, check_vectors
from assay.errors import EmbeddingsError, require_extra
from assay.llm.retry import RETRYABLE_STATUSES, RetryPolicy, parse_retry_after

__all__ = ["DEFAULT_MODEL", "OPENAI_URL", "OpenAIEmbeddings", "safe_url"]


OPENAI_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "text-embedding-3-small"


def safe_url(url: str) -> str:
    """``url`` without user:password."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class OpenAIEmbeddings(Embeddings):
    """``OpenAIEmbeddings(model="text-embedding-3-small", base_url=..., api_key=...)``."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dimensions: int | None = None,
        batch_size: int = 256,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL).rstrip("/")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"OpenAIEmbeddings.base_url must be an http(s) URL, got {safe_url(self.base_url)!r}"
            )
        self._api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.dimensions = dimensions
        self.batch_size = max(1, batch_size)
        self.timeout = timeout
        self.retry = retry or RetryPolicy(max_attempts=4)
        self.model_id = f"openai-compatible:{safe_url(self.base_url)}:{model}:{dimensions or ''}"
        self._client: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"OpenAIEmbeddings(model={self.model!r}, base_url={safe_url(self.base_url)!r}, "
            f"api_key={'***' if self._api_key else None})"
        )

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        vectors: list[Vector] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            vectors.extend(self._embed_batch(batch))
        return vectors

    def _embed_batch(self, texts: list[str]) -> list[Vector]:
        body: dict[str, Any] = {"model": self.model, "input": texts}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        reply = self._post(body)
        data = reply.get("data") if isinstance(reply, dict) else None
        if not isinstance(data, list):
            raise EmbeddingsError(f"{self._where()} answered without a 'data' list")
        try:
            ordered = sorted(data, key=lambda item: int(item.get("index", 0)))
            vectors = [item["embedding"] for item in ordered]
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise EmbeddingsError(f"{self._where()} answered with malformed data: {exc!r}") from exc
        return check_vectors(vectors, len(texts), self._where())

    def _post(self, body: dict[str, Any]) -> Any:
        import httpx

        failure = ""
        for attempt in range(1, self.retry.max_attempts + 1):
            retry_after: float | None = None
            try:
                response = self._http().post(
                    f"{self.base_url}/embeddings",
                    json=body,
                    headers=self._headers(),
                    timeout=self.timeout,
                )
            except httpx.TimeoutException:
                failure = f"no reply within {self.timeout:g} s"
            except httpx.TransportError as exc:
                failure = f"connection failed ({type(exc).__name__})"
            else:
                if response.status_code == 200:
                    try:
                        return response.json()
                    except ValueError:
                        failure = "the reply is not JSON"
                elif response.status_code in RETRYABLE_STATUSES:
                    failure = f"HTTP {response.status_code}: {self._scrub(response.text)}"
                    retry_after = parse_retry_after(response.headers.get("retry-after"))
                else:
                    raise EmbeddingsError(
                        f"{self._where()} refused the request: HTTP {response.status_code}: "
                        f"{self._scrub(response.text)}"
                    )
            if attempt < self.retry.max_attempts:
                time.sleep(self.retry.delay(attempt, retry_after))
        raise EmbeddingsError(f"{self._where()} failed after {self.retry.max_attempts} attempt(s): {failure}")

    def _http(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    httpx = require_extra("httpx", "text", feature="OpenAIEmbeddings")
                    client = httpx.Client(headers={"User-Agent": "assay"})
                    # pooled connections are closed when this provider goes, or at exit
                    weakref.finalize(self, client.close)
                    self._client = client
        return self._client

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def _where(self) -> str:
        return f"the embeddings endpoint {safe_url(self.base_url)}/embeddings (model {self.model!r})"

    def _scrub(self, text: str, limit: int = 300) -> str:
        """The server's error message (OpenAI's ``{"error": {"message": ...}}`` or the raw
        body), shortened, with the API key replaced by ``***``."""
        try:
            decoded = json.loads(text)
        except ValueError:
            decoded = None
        error = decoded.get("error", decoded) if isinstance(decoded, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text = error["message"]
        elif isinstance(error, str):
            text = error
        if self._api_key:
            text = text.replace(self._api_key, "***")
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
