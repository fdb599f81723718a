"""Reading tool calls out of a run (its ``tool`` child runs, or OpenAI-style ``tool_calls``
in chat messages) and out of a reference trajectory."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from assay.errors import TrajectoryError
from assay.schemas import Run

SOURCES = ("auto", "runs", "messages")


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    output: Any = None
    error: str | None = None

    def shown(self) -> dict[str, Any]:
        return {"name": self.name, "args": self.args}


def tool_runs(run: Run) -> Iterator[Run]:
    """``tool`` runs in the tree under ``run``, depth-first in call order (a tool that
    calls tools comes before them)."""
    for child in sorted(run.child_runs, key=lambda c: c.start_time):
        if child.run_type == "tool":
            yield child
        yield from tool_runs(child)


def calls_of_run(run: Run, source: str = "auto", messages_key: str | None = None) -> list[ToolCall]:
    """The run's tool calls. ``auto``: its ``tool`` child runs if it has any, else the
    ``tool_calls`` of the chat messages in its outputs."""
    if source not in SOURCES:
        raise ValueError(f"unknown trajectory source {source!r}; known: {', '.join(SOURCES)}")
    if source in ("auto", "runs"):
        from_runs = [_from_tool_run(child) for child in tool_runs(run)]
        if from_runs or source == "runs":
            return from_runs
    messages = _messages_in(run.outputs or {}, messages_key)
    return calls_of_messages(messages, where="run.outputs")


def _from_tool_run(run: Run) -> ToolCall:
    outputs = run.outputs or {}
    output = outputs.get("output", outputs) if len(outputs) == 1 else outputs
    return ToolCall(run.name, dict(run.inputs), output, run.error)


def _messages_in(outputs: Any, key: str | None) -> list[Any]:
    if isinstance(outputs, list):
        return outputs
    if key is not None:
        value = outputs.get(key)
        if not isinstance(value, list):
            raise TrajectoryError(f"run.outputs[{key!r}] must be a list of chat messages")
        return value
    for name in ("messages", "output", "outputs"):
        if isinstance(outputs.get(name), list):
            return list(outputs[name])
    message = outputs.get("message") or outputs.get("output")
    return [message] if isinstance(message, dict) else [outputs]


def calls_of_messages(messages: list[Any], where: str) -> list[ToolCall]:
    """Tool calls of assistant messages, each with the content of the ``tool`` message
    that answered it (matched by ``tool_call_id``) as its output."""
    answers = {
        m.get("tool_call_id"): m.get("content")
        for m in messages
        if isinstance(m, dict) and m.get("role") == "tool" and m.get("tool_call_id")
    }
    calls: list[ToolCall] = []
    for position, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        for index, call in enumerate(message.get("tool_calls") or []):
            made = _from_message_call(call, f"{where} message {position} tool_calls[{index}]")
            call_id = call.get("id") if isinstance(call, dict) else None
            if call_id in answers:
                made = ToolCall(made.name, made.args, answers[call_id])
            calls.append(made)
    return calls


def _from_message_call(call: Any, where: str) -> ToolCall:
    if not isinstance(call, dict):
        raise TrajectoryError(f"{where} must be an object, got {type(call).__name__}")
    nested = call.get("function")
    function: dict[str, Any] = nested if isinstance(nested, dict) else call
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise TrajectoryError(f"{where} has no tool name")
    raw = function.get("arguments", function.get("args", {}))
    return ToolCall(name, _arguments(raw, where))


def _arguments(raw: Any, where: str) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            raise TrajectoryError(f"{where}: arguments are not JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise TrajectoryError(f"{where}: arguments must be an object, got {type(raw).__name__}")
    return raw


def reference_calls(reference: Any, where: str) -> list[ToolCall]:
    """A reference trajectory: a list of ``{"name", "args"}`` (or OpenAI tool calls), or
    a list of chat messages (those without ``tool_calls``: an empty trajectory, the
    answer of an agent that called no tool)."""
    if not isinstance(reference, list):
        raise TrajectoryError(f"{where} must be a list of tool calls, got {type(reference).__name__}")
    if any(_is_chat_message(item) for item in reference):
        return calls_of_messages(reference, where)
    return [_from_message_call(item, f"{where}[{index}]") for index, item in enumerate(reference)]


def _is_chat_message(item: Any) -> bool:
    """A message has a role (a tool call, ``{"name", "args"}`` or OpenAI's, has none)."""
    return isinstance(item, dict) and ("tool_calls" in item or "role" in item)
