"""Which judge model to call: ``"openai/<model>"``, a ``ChatModel``, or the environment.

Defaults come from ``ASSAY_JUDGE_MODEL``, ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` so that
OpenAI, vLLM, Ollama, the llama.cpp server or a LiteLLM proxy are one base URL apart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from assay.errors import ModelNotConfiguredError
from assay.llm.retry import RetryPolicy
from assay.llm.usage import Price

__all__ = [
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "CACHE_ENV",
    "CONCURRENCY_ENV",
    "ChatModel",
    "DEFAULT_CONCURRENCY",
    "HOW_TO_CONFIGURE",
    "MODEL_ENV",
    "ModelSpec",
    "OPENAI_URL",
    "STRUCTURED_MODES",
    "StructuredMode",
    "model_from_string",
    "resolve_chat_model",
    "safe_url",
]


OPENAI_URL = "https://api.openai.com/v1"
MODEL_ENV = "ASSAY_JUDGE_MODEL"
BASE_URL_ENV = "OPENAI_BASE_URL"
API_KEY_ENV = "OPENAI_API_KEY"
CONCURRENCY_ENV = "ASSAY_JUDGE_MAX_CONCURRENCY"
CACHE_ENV = "ASSAY_JUDGE_CACHE"
DEFAULT_CONCURRENCY = 32

StructuredMode = Literal["auto", "json_schema", "grammar", "vllm", "ollama", "llamacpp", "prompt"]
STRUCTURED_MODES = ("auto", "json_schema", "grammar", "vllm", "ollama", "llamacpp", "prompt")

HOW_TO_CONFIGURE = (
    f"set {MODEL_ENV} (e.g. 'openai/gpt-4o-mini'), {API_KEY_ENV} for OpenAI, or "
    f"{BASE_URL_ENV} for an OpenAI-compatible server (vLLM: http://localhost:8000/v1, "
    f"Ollama: http://localhost:11434/v1), or pass model=ChatModel(base_url=..., model=..., "
    "api_key=...)"
)


@dataclass(frozen=True)
class ChatModel:
    """An OpenAI-compatible chat model and how to call it.

    ``structured_output``: ``"auto"`` walks a ladder, remembering per server and model where
    it stopped: ``response_format=json_schema``; if the server rejects it, grammar-constrained
    decoding in the fields vLLM (``guided_json``), Ollama (``format``) and the llama.cpp
    server (``json_schema``) read, in one request; if that is rejected too, the schema in the
    prompt. ``"json_schema"``, ``"vllm"``, ``"ollama"``, ``"llamacpp"``, ``"grammar"`` (all
    three) and ``"prompt"`` pin one rung and never fall back.
    """

    model: str
    base_url: str = OPENAI_URL
    api_key: str | None = field(default=None, repr=False)
    temperature: float | None = 0.0
    max_tokens: int | None = None
    params: dict[str, Any] = field(default_factory=dict)  # extra request fields (seed, top_p...)
    timeout: float = 60.0
    max_concurrency: int | None = None  # per model, process-wide; None: env or default
    tokens_per_minute: int | None = None  # per model, process-wide budget; None: no budget
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    structured_output: StructuredMode = "auto"
    cache: bool | None = None  # None: on unless ASSAY_JUDGE_CACHE=0
    price: Price | None = None

    def __repr__(self) -> str:
        return (
            f"ChatModel(model={self.model!r}, base_url={safe_url(self.base_url)!r}, "
            f"api_key={'***' if self.api_key else None}, temperature={self.temperature!r}, "
            f"structured_output={self.structured_output!r})"
        )

    def __post_init__(self) -> None:
        if not self.model:
            raise ModelNotConfiguredError(f"ChatModel needs a model name; {HOW_TO_CONFIGURE}")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"ChatModel.base_url must be an http(s) URL, got {safe_url(self.base_url)!r}")
        if self.structured_output not in STRUCTURED_MODES:
            raise ValueError(
                f"ChatModel.structured_output must be one of {', '.join(STRUCTURED_MODES)}, "
                f"got {self.structured_output!r}"
            )

    @property
    def concurrency(self) -> int:
        if self.max_concurrency is not None:
            return max(1, self.max_concurrency)
        return max(1, int(os.environ.get(CONCURRENCY_ENV) or DEFAULT_CONCURRENCY))

    @property
    def cache_enabled(self) -> bool:
        if self.cache is not None:
            return self.cache
        return os.environ.get(CACHE_ENV, "1").strip().lower() not in ("0", "false", "off", "no")

    def with_options(self, **changes: Any) -> ChatModel:
        return replace(self, **changes)


def model_from_string(spec: str) -> ChatModel:
    """``"openai/<model>"`` (or a bare model name) on ``OPENAI_BASE_URL`` with ``OPENAI_API_KEY``.

    Everything after ``openai/`` is the model name, so ``openai/Qwen/Qwen2.5-7B-Instruct``
    (vLLM) and ``openai/llama3.1:8b`` (Ollama) work; without the prefix the whole string is
    sent as the model name (what a LiteLLM proxy expects of ``anthropic/claude-...``).
    """
    name = spec.strip()
    if name.startswith("openai/"):
        name = name[len("openai/") :]
    if not name:
        raise ModelNotConfiguredError(f"empty judge model name {spec!r}; {HOW_TO_CONFIGURE}")
    base_url = (os.environ.get(BASE_URL_ENV) or OPENAI_URL).rstrip("/")
    api_key = os.environ.get(API_KEY_ENV) or None
    if base_url == OPENAI_URL and api_key is None:
        raise ModelNotConfiguredError(
            f"judge model {spec!r} would call OpenAI but {API_KEY_ENV} is not set; " + HOW_TO_CONFIGURE
        )
    return ChatModel(model=name, base_url=base_url, api_key=api_key)


ModelSpec = str | ChatModel | None


def resolve_chat_model(model: ModelSpec) -> ChatModel:
    """The ``ChatModel`` for ``model``, or from the environment when ``model`` is None."""
    if isinstance(model, ChatModel):
        return model
    if isinstance(model, str):
        return model_from_string(model)
    if model is None:
        spec = os.environ.get(MODEL_ENV)
        if not spec:
            raise ModelNotConfiguredError(f"no judge model is configured: {HOW_TO_CONFIGURE}")
        return model_from_string(spec)
    raise TypeError(
        f"a judge model must be a 'openai/<model>' string, a ChatModel or a ChatClient, "
        f"got {type(model).__name__}"
    )


def safe_url(url: str) -> str:
    """``url`` without user:password, for messages and metadata."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
