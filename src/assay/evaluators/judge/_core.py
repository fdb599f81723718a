"""The judge core behind both faces: judge evaluators (``LLMJudge``) and model-backed
scorers (``LLMScorer``).

One ``JudgeCore`` per judge: the model is resolved when the judge is built (a missing
configuration fails before any experiment starts); ``ask`` sends a rendered prompt and
validates the reply against a verdict schema (``_verdicts``); ``metered`` runs one
judgement under a fresh ``UsageMeter`` and keeps its usage even when it fails;
``metadata`` is what every result records (usage and model). Rendering is ``_text``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from assay.llm.chat import Message
from assay.llm.resolve import JudgeModel, resolve_structured
from assay.llm.structured import StructuredChat
from assay.llm.usage import Usage, UsageMeter

__all__ = ["JudgeCore", "Metered", "user_prompt"]

T = TypeVar("T")
Verdict = TypeVar("Verdict", bound=BaseModel)


@dataclass
class Metered(Generic[T]):
    """A judgement's value, or the exception it raised, with the usage it cost either way
    and its last exchange with the model (``assay.llm.transcript``), when it made one."""

    value: T | None
    error: BaseException | None
    usage: Usage
    transcript: dict[str, Any] | None = None


def user_prompt(text: str) -> list[Message]:
    """A rendered prompt as the single user message every judge sends."""
    return [{"role": "user", "content": text}]


class JudgeCore:
    """Model, calls and metering shared by every judge; see the module docstring."""

    def __init__(self, model: JudgeModel) -> None:
        self.chat: StructuredChat = resolve_structured(model)

    @property
    def model_name(self) -> str:
        return self.chat.client.model_name

    async def ask(
        self,
        prompt: str | list[Message],
        schema: type[Verdict],
        meter: UsageMeter,
        *,
        check: Callable[[Verdict], None] | None = None,
    ) -> Verdict:
        """One structured call: ``prompt`` (text or messages) in, a validated ``schema`` out."""
        messages = user_prompt(prompt) if isinstance(prompt, str) else prompt
        return await self.chat.ask(messages, schema, meter=meter, check=check)

    async def metered(
        self,
        judgement: Callable[[UsageMeter], Awaitable[T]],
        *,
        failures: tuple[type[BaseException], ...] = (Exception,),
    ) -> Metered[T]:
        """Run ``judgement(meter)``; an exception among ``failures`` is kept, others raise."""
        meter = UsageMeter()
        try:
            return Metered(await judgement(meter), None, meter.total, meter.transcript())
        except failures as exc:  # failures are data
            return Metered(None, exc, meter.total, meter.transcript())

    def metadata(self, usage: Usage | None, transcript: dict[str, Any] | None = None) -> dict[str, Any]:
        """What each result of a judgement records: its usage, the model, and what was
        asked and answered (``judge_call``: the prompt and the raw reply, bounded)."""
        recorded = {"usage": (usage or Usage()).as_metadata(), "model": self.model_name}
        return recorded if transcript is None else {**recorded, "judge_call": transcript}
