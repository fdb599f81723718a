"""Errors of the model layer. Messages name what was wrong and never carry the API key."""

from __future__ import annotations

from assay.errors import (
    LLMError,
    MissingExtraError,
    ModelCallError,
    ModelNotConfiguredError,
    ModelReplyError,
    ReplyCheckError,
)

__all__ = [
    "LLMError",
    "MissingExtraError",
    "ModelCallError",
    "ModelNotConfiguredError",
    "ModelReplyError",
    "ReplyCheckError",
]
