"""The wire format: a run and an example in, evaluation results out, all JSON.

Both directions go through the store's value codec (``assay.store.codec``), so a value
reaches a remote evaluator exactly as the store would keep it (integers beyond 64 bits,
non-string keys, lone surrogates, values JSON cannot hold as their ``repr``), and a
result comes back exactly as a local evaluator's would be stored.
"""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from assay.errors import WireError
from assay.schemas import EvaluationResult, Example, Run
from assay.store.codec import dumps, loads, untag

__all__ = [
    "EvaluateRequest",
    "EvaluateResponse",
    "EvaluatorInfo",
    "decode_results",
    "encode_request",
    "encode_results",
]


class EvaluateRequest(BaseModel):
    """What ``POST /evaluators/{name}/evaluate`` takes: the target's run and its example."""

    run: Run = Field(description="The target's run: inputs, outputs, error, timings, child runs.")
    example: Example | None = Field(
        default=None, description="The dataset example (inputs, reference outputs, metadata)."
    )

    @model_validator(mode="before")
    @classmethod
    def _exact_values(cls, data: Any) -> Any:
        """The codec's tags (``{"$int": ...}``, ``{"$set": [...]}``) back to the values they
        stand for, as ``loads`` reads them: the web framework parses the body as plain JSON."""
        return untag(data)


class EvaluateResponse(BaseModel):
    """The evaluator's results, in the order it returned them, keyed as it keyed them."""

    evaluator: str
    results: list[EvaluationResult]


class EvaluatorInfo(BaseModel):
    """One served evaluator: the name to call it by, and whether it runs on the event loop."""

    name: str
    is_async: bool


def encode_request(run: Run, example: Example | None) -> bytes:
    body = {"run": run.model_dump(), "example": None if example is None else example.model_dump()}
    return _encode(body)


def encode_results(evaluator: str, results: list[EvaluationResult]) -> bytes:
    return _encode({"evaluator": evaluator, "results": [r.model_dump() for r in results]})


def _encode(body: dict[str, Any]) -> bytes:
    text = dumps(_native_strings(body))
    assert text is not None  # a dict never encodes to None
    return text.encode()  # the codec escapes lone surrogates, so this is valid UTF-8


def decode_results(content: bytes) -> list[EvaluationResult]:
    """The results of a 200 reply; a ``WireError`` if the body is not one."""
    try:
        # As text: the codec reads integers beyond 64 bits exactly only from a str.
        decoded = loads(content.decode("utf-8"))
    except ValueError as exc:
        raise WireError(f"the evaluator service sent a body that is not JSON: {exc}") from None
    if not isinstance(decoded, dict) or not isinstance(decoded.get("results"), list):
        raise WireError("the evaluator service sent JSON without a 'results' list")
    try:
        return [EvaluationResult.model_validate(item) for item in decoded["results"]]
    except ValidationError as exc:
        raise WireError(f"the evaluator service sent a result that is not valid: {exc}") from None


def _native_strings(value: Any) -> Any:
    """UUIDs and datetimes as the strings orjson writes for them.

    The codec's fallback (taken for a value orjson refuses, such as an integer beyond 64
    bits) would write them as their ``repr``; the records' own ids and times must stay
    readable whatever the values beside them hold.
    """
    if isinstance(value, dict):
        return {key: _native_strings(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_native_strings(item) for item in value]
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    return value
