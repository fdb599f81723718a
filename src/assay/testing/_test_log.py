"""What a test marked ``@pytest.mark.assay`` (or ``langsmith``) records: its inputs, outputs, reference outputs
and feedback (LangSmith's ``langsmith.testing`` functions, under ``assay.testing``)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from assay.schemas import EvaluationResult, utcnow


@dataclass
class TestRecord:
    """One test's logged values; the plugin turns it into a stored run and its results."""

    nodeid: str
    inputs: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)
    reference_outputs: dict[str, Any] = field(default_factory=dict)
    feedback: list[EvaluationResult] = field(default_factory=list)
    started: datetime = field(default_factory=utcnow)
    logged_inputs: bool = False


_lock = threading.Lock()
_current: TestRecord | None = None


def begin(nodeid: str) -> TestRecord:
    global _current
    with _lock:
        _current = TestRecord(nodeid)
        return _current


def end() -> TestRecord | None:
    global _current
    with _lock:
        record, _current = _current, None
        return record


def current() -> TestRecord | None:
    """The running marked test's record, or None outside one."""
    return _current


def _record(function: str) -> TestRecord:
    record = _current
    if record is None:
        raise RuntimeError(
            f"assay.testing.{function}() was called outside a test marked @pytest.mark.assay "
            "(or @pytest.mark.langsmith): mark the test, and keep the assay pytest plugin enabled"
        )
    return record


def _as_dict(value: Any, function: str) -> dict[str, Any]:
    if isinstance(value, dict):
        return dict(value)
    raise TypeError(
        f"assay.testing.{function}() takes a dict, e.g. {function}({{'question': ...}}); got {value!r}"
    )


def log_inputs(inputs: dict[str, Any], /) -> None:
    """The test's inputs: they identify its example in the dataset."""
    record = _record("log_inputs")
    record.inputs.update(_as_dict(inputs, "log_inputs"))
    record.logged_inputs = True


def log_outputs(outputs: dict[str, Any], /) -> None:
    _record("log_outputs").outputs.update(_as_dict(outputs, "log_outputs"))


def log_reference_outputs(reference_outputs: dict[str, Any], /) -> None:
    _record("log_reference_outputs").reference_outputs.update(
        _as_dict(reference_outputs, "log_reference_outputs")
    )


def log_feedback(feedback: dict[str, Any] | list[dict[str, Any]] | None = None, /, **kwargs: Any) -> None:
    """``log_feedback(key="correct", score=1)`` or ``log_feedback({"key": ..., "score": ...})``
    (or a list of such dicts); the fields are EvaluationResult's."""
    record = _record("log_feedback")
    if feedback is not None and kwargs:
        raise TypeError("log_feedback() takes a dict (or list of dicts) or keyword arguments, not both")
    items = [kwargs] if feedback is None else feedback if isinstance(feedback, list) else [feedback]
    for item in items:
        if "key" not in item:
            raise TypeError(
                f"log_feedback() needs key=..., e.g. log_feedback(key='correct', score=1); got {item!r}"
            )
        record.feedback.append(EvaluationResult(**item))
