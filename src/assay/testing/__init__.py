"""Test doubles users can use too: a loopback OpenAI-compatible server."""

from assay.testing.openai_server import FakeOpenAIServer
from assay.testing.replies import ChatHandler, EmbeddingHandler, RecordedRequest, Reply

__all__ = ["ChatHandler", "EmbeddingHandler", "FakeOpenAIServer", "RecordedRequest", "Reply"]
