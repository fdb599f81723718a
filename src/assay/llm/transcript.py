"""What a judge sent and what its model answered, kept bounded for the row page.

A judgement's meter (``UsageMeter``) keeps its last exchange with the model: the
conversation of the final attempt (a repair included) and the raw reply. A result
stores it as ``metadata["judge_call"]``: each text cut in the middle past its bound (the
start and the end show where the verdict came from), and the model's API key, should
anything echo it, replaced by ``***``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["PROMPT_CHARS", "REPLY_CHARS", "Exchange", "bounded", "scrub"]

PROMPT_CHARS = 6_000
REPLY_CHARS = 2_000


@dataclass(frozen=True)
class Exchange:
    """One call: the messages sent, the reply's text, and which attempt it was (1: first)."""

    messages: tuple[dict[str, Any], ...]  # chat messages: role and content
    reply: str
    attempt: int = 1
    cached: bool = False


def bounded(exchange: Exchange, secrets: tuple[str, ...] = ()) -> dict[str, Any]:
    """The exchange as a result's metadata stores it: bounded text, secrets scrubbed."""
    prompt = "\n\n".join(f"[{m.get('role', '?')}]\n{_text(m.get('content'))}" for m in exchange.messages)
    return {
        "prompt": _cut(scrub(prompt, secrets), PROMPT_CHARS),
        "reply": _cut(scrub(exchange.reply, secrets), REPLY_CHARS),
        "attempt": exchange.attempt,
        "cached": exchange.cached,
    }


def _text(content: Any) -> str:
    """A message's content: text, or the text parts of a multi-part message."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "[non-text part]")) for part in content if isinstance(part, dict)
        )
    return str(content)


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with each secret replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    half = limit // 2
    return f"{text[:half]}\n… [{cut:,} characters cut] …\n{text[len(text) - (limit - half) :]}"
