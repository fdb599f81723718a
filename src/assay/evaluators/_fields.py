"""Picking the value to judge out of ``run.outputs`` and the reference out of ``example.outputs``.

A key that is named must exist; with no key, ``"output"`` is used, else the only value,
else the whole mapping when it is a chat message (``{"role": ..., "content": ...}``, a
chat completion). A picked chat message, in any form :func:`message_text` knows
(LangChain's ``AIMessage``, OpenAI's message objects and dicts), is compared as its text.
Anything else raises ``EvaluatorInputError``, which ``BaseEvaluator.evaluate`` turns into
an errored result (``error`` set, no score) that names the run or example and its keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay._output_text import message_text, output_text
from assay.errors import EvaluatorInputError
from assay.evaluation.evaluator import BaseEvaluator
from assay.schemas import EvaluationResult, Example, Run

DEFAULT_KEY = "output"


def pick(
    values: Mapping[str, Any] | None,
    key: str | None,
    *,
    where: str,
    option: str,
    candidates: Sequence[str] = (DEFAULT_KEY,),
) -> Any:
    """``values[key]``, or with no key the first of ``candidates`` present, else the only value."""
    if not values:
        raise EvaluatorInputError(f"{where} is empty; there is no value to compare")
    if key is not None:
        if key not in values:
            raise EvaluatorInputError(
                f"{where} has no key {key!r} (its keys: {_keys(values)}); set {option}= to one of them"
            )
        return values[key]
    for candidate in candidates:
        if candidate in values:
            return values[candidate]
    if len(values) == 1:
        return next(iter(values.values()))
    if message_text(values) is not None:
        return values  # the target returned a message dict: its text is the output
    raise EvaluatorInputError(
        f"{where} has several keys ({_keys(values)}) and none is {candidates[0]!r}; "
        f"set {option}= to choose one"
    )


def _keys(values: Mapping[str, Any]) -> str:
    return ", ".join(repr(key) for key in values)


def as_text(value: Any) -> str:
    """Text of a picked output or reference value (:func:`output_text`)."""
    return output_text(value)


class ReferenceEvaluator(BaseEvaluator):
    """An evaluator comparing the run's output with the example's reference output.

    ``output_key`` picks the value in ``run.outputs``; ``reference_key`` picks it in
    ``example.outputs`` (default: ``output_key`` if the example has it, else ``"output"``,
    else the only value).
    """

    default_name = "reference"
    reference_candidates: tuple[str, ...] = (DEFAULT_KEY,)

    def __init__(
        self,
        *,
        output_key: str | None = None,
        reference_key: str | None = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(name=name or self.default_name, **kwargs)
        self.output_key = output_key
        self.reference_key = reference_key

    def result(self, score: float, **fields: Any) -> EvaluationResult:
        """A result under this evaluator's key (built directly: these evaluators are hot)."""
        return EvaluationResult(key=self.name, score=score, **fields)

    def prediction(self, run: Run) -> Any:
        if run.outputs is None and run.error is not None:
            raise EvaluatorInputError(
                f"the target failed on this example ({run.error}); there is no output to compare"
            )
        picked = pick(run.outputs, self.output_key, where="run.outputs", option="output_key")
        return _text_if_message(picked)

    def reference(self, example: Example | None) -> Any:
        if example is None:
            raise EvaluatorInputError(
                f"{type(self).__name__} compares with a reference output and needs an example"
            )
        where = f"example.outputs of example {example.id}"
        candidates = tuple(dict.fromkeys(c for c in (self.output_key, *self.reference_candidates) if c))
        picked = pick(
            example.outputs, self.reference_key, where=where, option="reference_key", candidates=candidates
        )
        return _text_if_message(picked)


def _text_if_message(value: Any) -> Any:
    """A chat message as its text; any other value as it is."""
    if isinstance(value, str):
        return value  # the common case, kept cheap
    text = message_text(value)
    return value if text is None else text
