"""Examples' fields as a person types them: JSON objects in text boxes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from assay.ui.errors import BadRequest

__all__ = ["as_text", "json_object"]


def json_object(form: Mapping[str, str], name: str, *, required: bool = False) -> dict[str, Any] | None:
    """The field ``name`` as a JSON object (empty: None), else a BadRequest naming it."""
    text = form.get(name, "").strip()
    if not text:
        if required:
            raise BadRequest(f'parameter {name!r}: a JSON object is required, such as {{"question": "..."}}')
        return None
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"parameter {name!r}: not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise BadRequest(f"parameter {name!r}: must be a JSON object ({{...}}), got {type(value).__name__}")
    return value


def as_text(value: Any) -> str:
    """A value as the text box shows it: indented JSON, empty for none."""
    if value is None:
        return ""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
