"""What a program or a document sends costs the parent bounded memory and linear time:
request bodies kept up to a limit (with their size and sha256), ``$ref``s expanded
within a budget, OpenAPI resolution linear in the document."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from assay.evaluators import APICallEvaluator
from assay.evaluators.api._mock import KEPT_BODY_BYTES
from assay.evaluators.api._openapi import MAX_RESOLVED_NODES, OpenAPIError, parse_api
from assay.evaluators.data._files import _OutputError, parse_output
from assay.schemas import EvaluationResults, Example, Run

MIB = 1024 * 1024


def document(paths: dict[str, Any], schemas: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": paths,
        "components": {"schemas": schemas or {}},
    }


def post_with(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "post": {
            "requestBody": {"content": {"application/json": {"schema": schema}}},
            "responses": {"200": {"description": "ok"}},
        }
    }


def nested_refs(levels: int, fanout: int) -> dict[str, Any]:
    """Each schema names the next one ``fanout`` times: a few KB that expand to
    ``fanout ** levels`` nodes."""
    schemas: dict[str, Any] = {
        f"S{level}": {
            "type": "object",
            "properties": {f"p{i}": {"$ref": f"#/components/schemas/S{level + 1}"} for i in range(fanout)},
        }
        for level in range(levels)
    }
    schemas[f"S{levels}"] = {"type": "string"}
    return document({"/x": post_with({"$ref": "#/components/schemas/S0"})}, schemas)


def test_nested_refs_are_refused_within_a_budget() -> None:
    small = nested_refs(9, 4)  # 4^9 schemas: over the budget, and quick to expand on old code
    assert len(json.dumps(small)) < 4000
    with pytest.raises(OpenAPIError, match=rf"expand to more than {MAX_RESOLVED_NODES} nodes"):
        parse_api(small, "example.inputs['openapi']")
    with pytest.raises(OpenAPIError, match="expand to more than"):
        parse_api(nested_refs(10, 10), "example.inputs['openapi']")  # 10^10: never attempted


def test_shallow_refs_still_resolve() -> None:
    api = parse_api(nested_refs(3, 2), "doc")
    [operation] = api.operations
    assert operation.body_schema is not None
    assert operation.body_schema["properties"]["p1"]["properties"]["p0"]["type"] == "object"


def test_openapi_resolution_is_linear(assert_linear: Any) -> None:
    def many_operations(count: int) -> dict[str, Any]:
        schemas = {"Item": {"type": "object", "properties": {"id": {"type": "integer"}}}}
        paths = {f"/items{index}": post_with({"$ref": "#/components/schemas/Item"}) for index in range(count)}
        return document(paths, schemas)

    # 600 paths: more patterns than the re module caches, at both sizes alike
    assert_linear(lambda doc: parse_api(doc, "doc"), many_operations, 600)


SENDER = """import json, os, urllib.request, urllib.error
base = os.environ["API_BASE_URL"]
body = json.dumps({"items": ["x" * (1024 * 1024 - 100)], "user_id": 1}).encode()
for _ in range(20):
    request = urllib.request.Request(base + "/x", method="POST", data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(request, timeout=10).read()
    except urllib.error.HTTPError:
        pass
print(len(body))
"""


@pytest.mark.slow
def test_request_bodies_are_kept_up_to_a_limit_with_size_and_hash() -> None:
    body = json.dumps({"items": ["x" * (MIB - 100)], "user_id": 1}).encode()
    spec = document({"/x": post_with({"type": "object"})})
    results = APICallEvaluator().evaluate(Run(outputs={"output": SENDER}), Example(inputs={"openapi": spec}))
    assert isinstance(results, EvaluationResults), results
    calls = results.results[0].metadata["calls"]
    assert len(calls) == 20, results.results[0].comment
    assert all(call["body_bytes"] == len(body) > KEPT_BODY_BYTES for call in calls)
    assert all(call["body_sha256"] == hashlib.sha256(body).hexdigest() for call in calls)
    assert all(call["body"] is None and "over the" in call["body_dropped"] for call in calls)
    assert len(json.dumps(calls)) < 64 * 1024  # 20 MiB were sent


def test_a_table_of_objects_with_distinct_keys_is_refused_not_filled() -> None:
    rows = [{f"key{index}": index} for index in range(5000)]  # 25 million cells if filled
    with pytest.raises(_OutputError, match=r"5000 rows x 5000 columns .* over the 4000000-cell limit"):
        parse_output(json.dumps(rows).encode(), ".json")


@pytest.mark.parametrize("extension", [".csv", ".jsonl", ".json"])
def test_output_tables_are_read_in_linear_time(assert_linear: Any, extension: str) -> None:
    def output(count: int) -> bytes:
        rows = [{"region": f"r{index % 7}", "total": index * 1.5, "n": index} for index in range(count)]
        if extension == ".csv":
            return (
                "region,total,n\n" + "".join(f"{r['region']},{r['total']},{r['n']}\n" for r in rows)
            ).encode()
        if extension == ".jsonl":
            return "".join(json.dumps(row) + "\n" for row in rows).encode()
        return json.dumps(rows).encode()

    assert_linear(lambda data: parse_output(data, extension), output, 1000)
