"""What a judge shows the model: inputs, outputs and references rendered as plain text."""

from __future__ import annotations

import string
from typing import Any

from assay._output_text import output_text


def render(value: Any, key: str | None = None, *, what: str = "value") -> str:
    """``value`` (or ``value[key]``, which must exist) as text, by :func:`output_text`'s rule."""
    if key is not None:
        if not isinstance(value, dict) or key not in value:
            have = sorted(value) if isinstance(value, dict) else type(value).__name__
            raise ValueError(f"the {what} has no key {key!r} (it has {have})")
        value = value[key]
    return output_text(value)


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
