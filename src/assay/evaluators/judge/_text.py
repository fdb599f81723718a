"""What a judge shows the model: inputs, outputs and references rendered as plain text."""

from __future__ import annotations

import json
import string
from typing import Any

_TEXT_KEYS = (
    "output", "answer", "text", "response", "content", "result", "prediction",
    "input", "question", "query", "prompt", "reference", "expected", "context",
)


def render(value: Any, key: str | None = None, *, what: str = "value") -> str:
    """``value`` (or ``value[key]``) as text: strings as is, chat messages as lines, else JSON."""
    if key is not None:
        if not isinstance(value, dict) or key not in value:
            have = sorted(value) if isinstance(value, dict) else type(value).__name__
            raise ValueError(f"the {what} has no key {key!r} (it has {have})")
        value = value[key]
    return _render(value)


def _render(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if "role" in value and "content" in value:
            return f"{value['role']}: {_render(value['content'])}"
        if len(value) == 1:
            return _render(next(iter(value.values())))
        for known in _TEXT_KEYS:
            if known in value and isinstance(value[known], str):
                return str(value[known])
        if "messages" in value and isinstance(value["messages"], list):
            return _render(value["messages"])
    if isinstance(value, list) and value and all(
        isinstance(item, dict) and "role" in item for item in value
    ):
        return "\n".join(_render(item) for item in value)
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def check_template(template: str, *, required: set[str], allowed: set[str], owner: str) -> str:
    """``template`` if its placeholders are valid for ``owner``; else a clear error."""
    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        raise ValueError(f"{owner} prompt is not a valid str.format template: {exc}") from None
    unknown = fields - allowed
    missing = required - fields
    if unknown or missing:
        problems = []
        if unknown:
            problems.append(f"unknown placeholder(s) {sorted(unknown)}")
        if missing:
            problems.append(f"missing placeholder(s) {sorted(missing)}")
        raise ValueError(
            f"{owner} prompt has {' and '.join(problems)}; allowed: "
            + ", ".join("{" + name + "}" for name in sorted(allowed))
        )
    return template
