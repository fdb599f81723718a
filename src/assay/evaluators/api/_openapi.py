"""The parts of an OpenAPI 3 document the mock server needs: its operations, their
parameters and request body schemas (``$ref`` resolved), and example responses."""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from assay.errors import OpenAPIError

METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
MAX_REF_DEPTH = 32
MAX_RESOLVED_NODES = 200_000  # what one document's $refs may expand to, all operations together


@dataclass(frozen=True)
class Operation:
    method: str  # upper case
    template: str  # "/users/{id}"
    pattern: re.Pattern[str]
    operation_id: str | None
    parameters: list[dict[str, Any]]
    body_schema: dict[str, Any] | None
    body_required: bool
    status: int
    example: Any

    @property
    def label(self) -> str:
        return f"{self.method} {self.template}"


@dataclass(frozen=True)
class API:
    operations: list[Operation]
    base_path: str = ""
    title: str = ""
    document: dict[str, Any] = field(default_factory=dict)

    def find(self, method: str, path: str) -> tuple[Operation | None, dict[str, str], bool]:
        """The operation, its path parameters, and whether the path exists at all."""
        if self.base_path and path.startswith(self.base_path):
            path = path[len(self.base_path) :] or "/"
        path_known = False
        for operation in self.operations:
            found = operation.pattern.fullmatch(path)
            if found is None:
                continue
            path_known = True
            if operation.method == method:
                return operation, found.groupdict(), True
        return None, {}, path_known


def load_document(raw: Any, where: str) -> dict[str, Any]:
    """A dict as it is, or JSON / YAML text; a parse error names its line."""
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str) or not raw.strip():
        raise OpenAPIError(f"{where} must be an OpenAPI document (a mapping, JSON or YAML text)")
    if raw.lstrip().startswith("{"):
        try:
            loaded = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise OpenAPIError(
                f"{where} is not valid JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}"
            ) from None
    else:
        loaded = _yaml(raw, where)
    if not isinstance(loaded, dict):
        raise OpenAPIError(f"{where} must hold a mapping at the top, got {type(loaded).__name__}")
    return loaded


def _yaml(raw: str, where: str) -> Any:
    try:
        yaml: Any = importlib.import_module("yaml")  # untyped; an optional extra
    except ImportError:
        raise OpenAPIError(f"{where} is YAML: pip install 'assay[api]' (PyYAML)") from None
    try:
        return yaml.safe_load(raw)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        raise OpenAPIError(f"{where} is not valid YAML: {line}{exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise OpenAPIError(f"{where} is not valid YAML: {exc}") from None


def parse_api(document: dict[str, Any], where: str) -> API:
    paths = document.get("paths")
    if not str(document.get("openapi", "")).startswith("3"):
        raise OpenAPIError(
            f"{where}: only OpenAPI 3 documents are supported ('openapi': {document.get('openapi')!r})"
        )
    if not isinstance(paths, dict) or not paths:
        raise OpenAPIError(f"{where}: the document has no 'paths'")
    resolver = _Resolver(document, where)
    operations = []
    for template, item in paths.items():
        if not isinstance(item, dict) or not str(template).startswith("/"):
            raise OpenAPIError(f"{where}: paths[{template!r}] must be a mapping under '/'")
        shared = item.get("parameters") or []
        for method in METHODS:
            if isinstance(item.get(method), dict):
                operations.append(
                    _operation(
                        str(template),
                        method,
                        item[method],
                        shared,
                        resolver,
                        f"{where}: paths[{template!r}].{method}",
                    )
                )
    servers = document.get("servers") or []
    base = (
        urlparse(str(servers[0].get("url", ""))).path.rstrip("/")
        if servers and isinstance(servers[0], dict)
        else ""
    )
    info = document.get("info") if isinstance(document.get("info"), dict) else {}
    return API(operations, base, str((info or {}).get("title", "")), document)


def _operation(
    template: str, method: str, spec: dict[str, Any], shared: list[Any], resolver: _Resolver, where: str
) -> Operation:
    parameters = [resolver.resolve(p) for p in [*shared, *(spec.get("parameters") or [])]]
    for parameter in parameters:
        if not isinstance(parameter, dict) or "name" not in parameter or "in" not in parameter:
            raise OpenAPIError(f"{where}: a parameter needs 'name' and 'in'")
    body = resolver.resolve(spec.get("requestBody") or {})
    body_schema = ((body.get("content") or {}).get("application/json") or {}).get("schema")
    status, example = _example_response(spec.get("responses") or {}, resolver)
    return Operation(
        method.upper(),
        template,
        _pattern(template),
        spec.get("operationId"),
        parameters,
        resolver.resolve(body_schema) if body_schema else None,
        bool(body.get("required")),
        status,
        example,
    )


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[^}/]+\})", template)
    regex = "".join(f"(?P<{_group(p[1:-1])}>[^/]+)" if p.startswith("{") else re.escape(p) for p in parts)
    return re.compile(regex)


def _group(name: str) -> str:
    return re.sub(r"\W", "_", name) if name.isidentifier() else "p_" + re.sub(r"\W", "_", name)


def _example_response(responses: dict[str, Any], resolver: _Resolver) -> tuple[int, Any]:
    for code, response in sorted(responses.items(), key=lambda kv: str(kv[0])):
        if not str(code).startswith("2"):
            continue
        response = resolver.resolve(response)
        content = (
            ((response.get("content") or {}).get("application/json") or {})
            if isinstance(response, dict)
            else {}
        )
        if "example" in content:
            return int(code), content["example"]
        examples = content.get("examples")
        if isinstance(examples, dict) and examples:
            first = resolver.resolve(next(iter(examples.values())))
            return int(code), first.get("value") if isinstance(first, dict) else None
        schema = resolver.resolve(content.get("schema") or {})
        return int(code), schema.get("example") if isinstance(schema, dict) else None
    return 200, None


class _Resolver:
    """``$ref`` to ``#/...`` inside the document, expanded where an operation needs it
    (cycles stop at a depth). Expansion has a budget: a few KB of nested references can
    name 2^32 nodes, so past ``MAX_RESOLVED_NODES`` the document is refused, not expanded."""

    def __init__(self, document: dict[str, Any], where: str) -> None:
        self.document = document
        self.where = where
        self.budget = MAX_RESOLVED_NODES

    def resolve(self, node: Any, depth: int = 0) -> Any:
        if depth > MAX_REF_DEPTH:
            return {}
        self.budget -= 1
        if self.budget < 0:
            raise OpenAPIError(
                f"{self.where}: its $refs expand to more than {MAX_RESOLVED_NODES} nodes; "
                "reference shared schemas less deeply (nested references multiply)"
            )
        if isinstance(node, dict):
            if "$ref" in node:
                return self.resolve(self._target(str(node["$ref"])), depth + 1)
            return {k: self.resolve(v, depth + 1) for k, v in node.items()}
        if isinstance(node, list):
            return [self.resolve(item, depth + 1) for item in node]
        return node

    def _target(self, ref: str) -> Any:
        if not ref.startswith("#/"):
            raise OpenAPIError(f"{self.where}: only local references are supported ({ref})")
        node: Any = self.document
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise OpenAPIError(f"{self.where}: the reference {ref} points nowhere")
            node = node[part]
        return node
