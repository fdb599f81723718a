"""A chat completion as OpenAI streams it (``stream=True``): server-sent events of
``chat.completion.chunk`` objects, a word at a time, then ``data: [DONE]``."""

from __future__ import annotations

import json
import re
from typing import Any


def streamed(completion: dict[str, Any], include_usage: bool) -> bytes:
    """The SSE body that streams ``completion`` (a ``chat.completion`` object)."""
    choice = completion["choices"][0]
    text = choice["message"].get("content") or ""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": word} for word in re.findall(r"\S+\s*|\s+", text)]
    chunks = [_chunk(completion, delta, None) for delta in deltas]
    chunks.append(_chunk(completion, {}, choice.get("finish_reason") or "stop"))
    if include_usage:
        chunks.append({**_chunk(completion, {}, None), "choices": [], "usage": completion.get("usage")})
    events = [f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n" for chunk in chunks]
    return ("".join(events) + "data: [DONE]\n\n").encode()


def _chunk(completion: dict[str, Any], delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": completion["created"],
        "model": completion["model"],
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
