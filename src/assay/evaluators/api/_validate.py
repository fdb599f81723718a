"""Checking one request against its operation: path and query parameters (text, coerced
to the schema's type first) and the JSON body (jsonschema)."""

from __future__ import annotations

from typing import Any

from assay.evaluators.api._openapi import Operation

MAX_PROBLEMS = 10


def validate_request(operation: Operation, path_params: dict[str, str], call: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    query = call.get("query") or {}
    known_query = set()
    for parameter in operation.parameters:
        name, place = str(parameter["name"]), parameter["in"]
        schema = parameter.get("schema") or {}
        if place == "query":
            known_query.add(name)
            if name not in query:
                if parameter.get("required"):
                    problems.append(f"query parameter {name!r} is required")
                continue
            problems += _check_text(f"query parameter {name!r}", query[name], schema)
        elif place == "header":
            value = (call.get("headers") or {}).get(name.lower())
            if value is None:
                if parameter.get("required"):
                    problems.append(f"header {name!r} is required")
                continue
            problems += _check_text(f"header {name!r}", value, schema)
        elif place == "path":
            value = path_params.get(name) or path_params.get(f"p_{name}")
            if value is not None:
                problems += _check_text(f"path parameter {name!r}", value, schema)
    unknown = sorted(set(query) - known_query)
    if unknown:
        problems.append(f"undeclared query parameter(s): {', '.join(unknown)}")
    problems += _check_body(operation, call.get("body"))
    return problems[:MAX_PROBLEMS]


def _check_text(what: str, value: Any, schema: dict[str, Any]) -> list[str]:
    values = value if isinstance(value, list) else [value]
    kind = schema.get("type")
    for text in values:
        try:
            coerced = _coerce(str(text), kind)
        except ValueError:
            return [f"{what} must be {kind}, got {text!r}"]
        problems = _schema_errors(coerced, schema, what)
        if problems:
            return problems
    return []


def _coerce(text: str, kind: Any) -> Any:
    if kind == "integer":
        return int(text)
    if kind == "number":
        return float(text)
    if kind == "boolean":
        if text.lower() not in ("true", "false"):
            raise ValueError(text)
        return text.lower() == "true"
    return text


def _check_body(operation: Operation, body: Any) -> list[str]:
    if operation.body_schema is None:
        return []
    if body is None:
        return ["a JSON request body is required"] if operation.body_required else []
    if isinstance(body, dict) and "$text" in body:
        return ["the request body is not JSON"]
    return _schema_errors(body, operation.body_schema, "the request body")


def _schema_errors(value: Any, schema: dict[str, Any], what: str) -> list[str]:
    import jsonschema

    schema = _nullable(schema)
    validator = jsonschema.Draft202012Validator(schema)
    found = []
    for error in sorted(validator.iter_errors(value), key=lambda e: list(e.path)):
        where = "".join(f"[{p!r}]" for p in error.path)
        found.append(f"{what}{where}: {error.message}")
        if len(found) >= MAX_PROBLEMS:
            break
    return found


def _nullable(schema: Any) -> Any:
    """OpenAPI 3.0's ``nullable: true`` as JSON Schema's ``null`` type."""
    if isinstance(schema, dict):
        converted = {k: _nullable(v) for k, v in schema.items() if k != "nullable"}
        if schema.get("nullable") is True and isinstance(schema.get("type"), str):
            converted["type"] = [schema["type"], "null"]
        return converted
    if isinstance(schema, list):
        return [_nullable(item) for item in schema]
    return schema
