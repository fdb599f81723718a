"""How the fake server plays vLLM, Ollama or the llama.cpp server: which request fields
carry a schema it enforces, and what enforcing means.

A server that honours a schema decodes under a grammar, so its reply is schema-valid
JSON whatever the model "wanted" to say. The fake plays that: a handler reply that is
not a schema-valid object is replaced by the closest valid one (the handler's fields kept
where they fit, the rest the first allowed value), which is what a grammar forces.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["DIALECTS", "constrain", "enforced_schema", "foreign_field"]

#: request fields each dialect reads a JSON schema from (besides ``response_format``)
DIALECTS: dict[str, tuple[str, ...]] = {
    "openai": (),
    "vllm": ("guided_json", "structured_outputs"),
    "ollama": ("format",),
    "llamacpp": ("json_schema",),
}
_ALL_FIELDS = {name for names in DIALECTS.values() for name in names}


def enforced_schema(body: Any, dialect: str, *, response_format: bool) -> dict[str, Any] | None:
    """The schema ``dialect`` would enforce for this request body, if any."""
    if not isinstance(body, dict):
        return None
    if response_format:
        spec = (body.get("response_format") or {}).get("json_schema") or {}
        if isinstance(spec.get("schema"), dict):
            return dict(spec["schema"])
    for name in DIALECTS[dialect]:
        value = body.get(name)
        if name == "structured_outputs" and isinstance(value, dict):
            value = value.get("json")
        if isinstance(value, dict):
            return value
    return None


def foreign_field(body: Any, dialect: str) -> str | None:
    """A schema field of another dialect in the request (a strict server rejects it)."""
    if not isinstance(body, dict):
        return None
    own = set(DIALECTS[dialect])
    return next((name for name in sorted(_ALL_FIELDS - own) if name in body), None)


def constrain(text: str, schema: dict[str, Any]) -> str:
    """``text`` if it is a schema-valid JSON object, else the valid object a grammar forces."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    return json.dumps(_fit(value, schema, schema.get("$defs", {})), ensure_ascii=False)


def _fit(value: Any, schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    if "$ref" in schema:
        return _fit(value, defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        return _fit(value, schema["anyOf"][0], defs)
    if "enum" in schema:
        return value if value in schema["enum"] else schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        given = value if isinstance(value, dict) else {}
        properties = schema.get("properties", {})
        return {name: _fit(given.get(name), sub, defs) for name, sub in properties.items()}
    if kind == "array":
        items = value if isinstance(value, list) else []
        return [_fit(item, schema.get("items", {}), defs) for item in items]
    if kind == "string":
        return value if isinstance(value, str) else ""
    if kind == "boolean":
        return value if isinstance(value, bool) else False
    if kind in ("number", "integer"):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return value if ok and (kind == "number" or float(value).is_integer()) else 0
    return value
