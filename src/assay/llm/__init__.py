"""The model layer: an OpenAI-compatible chat client with structured output, retries and a cache."""

from assay.errors import (
    LLMError,
    MissingExtraError,
    ModelCallError,
    ModelNotConfiguredError,
    ModelReplyError,
    ReplyCheckError,
)
from assay.llm.chat import ChatClient, ChatReply, ChatRequest, Message, ResponseSchema
from assay.llm.model import ChatModel, ModelSpec, resolve_chat_model
from assay.llm.openai_compatible import JSON_IN_PROMPT_INSTRUCTION, OpenAICompatibleClient
from assay.llm.resolve import JudgeModel, resolve_client
from assay.llm.retry import RetryPolicy
from assay.llm.structured import CORRECTION_PROMPT, StructuredChat, response_schema
from assay.llm.usage import Price, Usage, UsageMeter

__all__ = [
    "CORRECTION_PROMPT",
    "JSON_IN_PROMPT_INSTRUCTION",
    "ChatClient",
    "ChatModel",
    "ChatReply",
    "ChatRequest",
    "JudgeModel",
    "LLMError",
    "Message",
    "MissingExtraError",
    "ModelCallError",
    "ModelNotConfiguredError",
    "ModelReplyError",
    "ModelSpec",
    "OpenAICompatibleClient",
    "Price",
    "ReplyCheckError",
    "ResponseSchema",
    "RetryPolicy",
    "StructuredChat",
    "Usage",
    "UsageMeter",
    "resolve_chat_model",
    "resolve_client",
    "response_schema",
]
