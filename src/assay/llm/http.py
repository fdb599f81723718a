"""The HTTP the model clients speak, for assay's other HTTP clients (the remote evaluator's):
a pooled transport per URL scheme, the one background event loop every call runs on
(``call_on_io_loop``), and a server's error body read without leaking a secret.

``TransportTimeout`` and ``TransportFailure`` never reach a user: each client turns them
into its own error (``ModelCallError``, ``RemoteEvaluatorError``)."""

from __future__ import annotations

from assay.llm._http import error_message, transport_for
from assay.llm._io_loop import call as call_on_io_loop
from assay.llm._transport import RawResponse, Transport, TransportFailure, TransportTimeout

__all__ = [
    "RawResponse",
    "Transport",
    "TransportFailure",
    "TransportTimeout",
    "call_on_io_loop",
    "error_message",
    "transport_for",
]
