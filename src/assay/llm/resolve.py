"""From whatever the user passed as ``model`` to a ready structured chat."""

from __future__ import annotations

from assay.llm.chat import ChatClient
from assay.llm.model import ChatModel, resolve_chat_model
from assay.llm.openai_compatible import OpenAICompatibleClient
from assay.llm.structured import StructuredChat

__all__ = ["JudgeModel", "resolve_client", "resolve_structured"]


#: what judges accept as ``model``: "openai/<name>", a ChatModel, any ChatClient, or None (env)
JudgeModel = str | ChatModel | ChatClient | StructuredChat | None


def resolve_client(model: JudgeModel) -> ChatClient:
    """The chat client for ``model``; raises ``ModelNotConfiguredError`` when there is none."""
    if isinstance(model, StructuredChat):
        return model.client
    if isinstance(model, ChatClient):
        return model
    return OpenAICompatibleClient(resolve_chat_model(model))


def resolve_structured(model: JudgeModel) -> StructuredChat:
    if isinstance(model, StructuredChat):
        return model
    return StructuredChat(resolve_client(model))
