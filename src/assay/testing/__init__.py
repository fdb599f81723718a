"""Test doubles users can use too: loopback OpenAI-compatible and Anthropic servers; and what tests marked
``@pytest.mark.assay`` (or LangSmith's ``@pytest.mark.langsmith``, ``@test``, ``@unit``) log (``log_inputs``, ``log_outputs``, ``log_reference_outputs``,
``log_feedback``, ``expect``)."""

from assay.testing._bias import Bias
from assay.testing._decorators import test, unit
from assay.testing._expect import expect
from assay.testing._test_log import log_feedback, log_inputs, log_outputs, log_reference_outputs
from assay.testing.anthropic_server import FakeAnthropicServer
from assay.testing.openai_server import FakeOpenAIServer
from assay.testing.replies import ChatHandler, EmbeddingHandler, RecordedRequest, Reply

__all__ = [
    "Bias",
    "ChatHandler",
    "EmbeddingHandler",
    "FakeAnthropicServer",
    "FakeOpenAIServer",
    "RecordedRequest",
    "Reply",
    "expect",
    "log_feedback",
    "log_inputs",
    "log_outputs",
    "log_reference_outputs",
    "test",
    "unit",
]
