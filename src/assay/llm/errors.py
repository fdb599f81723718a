"""Errors of the model layer. Messages name what was wrong and never carry the API key."""

from __future__ import annotations

from assay.errors import AssayError, MissingExtraError

__all__ = [
    "LLMError",
    "MissingExtraError",
    "ModelCallError",
    "ModelNotConfiguredError",
    "ModelReplyError",
    "ReplyCheckError",
]


class LLMError(AssayError):
    """Base of every error raised by ``assay.llm``."""


class ModelNotConfiguredError(LLMError, ValueError):
    """No judge model was given and none is configured in the environment."""


class ModelCallError(LLMError):
    """The model server failed the request (after retries, where the failure was retryable)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


class ModelReplyError(LLMError):
    """The model answered, but never with a reply that parses and matches the schema."""

    def __init__(self, message: str, *, reply: str = "") -> None:
        super().__init__(message)
        self.reply = reply


class ReplyCheckError(AssayError, ValueError):
    """Raised by a caller's check of a parsed reply: the reply is retried like a malformed one."""
