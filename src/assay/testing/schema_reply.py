"""A valid answer to any judge's JSON schema: the loopback server's default reply, so a
judge pipeline can be tested offline in one line, whichever judges it uses.

The answer is the smallest instance that validates: the first enum value or alternative,
a number at the top of its range, one item per array, every property of an object. It is
cooperative, not wise: use ``verdicts=`` (or a handler) to script what a test checks.
"""

from __future__ import annotations

import json
from typing import Any

from assay.testing.replies import RecordedRequest

__all__ = ["instance_of", "valid_reply"]

_MAX_DEPTH = 32  # a schema that refers to itself gets an empty value past this depth


def valid_reply(request: RecordedRequest) -> Any:
    """What a cooperative model answers: an instance of the request's JSON schema; without
    a schema, the JSON the free-form judges parse (a reasoning and a Y verdict)."""
    schema = request.schema
    if schema is None:
        return json.dumps({"reasoning": "ok", "value": "Y"})
    return instance_of(schema, schema.get("$defs", {}))


def instance_of(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        return None
    if "$ref" in schema:
        return instance_of(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs, depth + 1)
    for combinator in ("anyOf", "oneOf", "allOf"):
        if schema.get(combinator):
            return instance_of(schema[combinator][0], defs, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: instance_of(properties[name], defs, depth + 1) for name in properties}
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        return [instance_of(schema.get("items", {}), defs, depth + 1) for _ in range(count)]
    if kind in ("integer", "number"):
        top = schema.get("maximum", schema.get("minimum", 1))
        return int(top) if kind == "integer" else float(top)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "ok" + "k" * max(0, int(schema.get("minLength", 0)) - 2)
