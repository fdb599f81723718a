"""API fixtures chosen by query and headers (a paginated endpoint), faults aimed at a
query, required headers validated, and retries checked for their Idempotency-Key and
for waiting as Retry-After asked: each on a real client in the sandbox."""

from __future__ import annotations

from typing import Any

import pytest

from assay.evaluators import APICallEvaluator
from assay.schemas import EvaluationResult, EvaluationResults, Example, Run

pytestmark = pytest.mark.slow

SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Shop", "version": "1"},
    "paths": {
        "/items": {
            "get": {
                "parameters": [
                    {"name": "cursor", "in": "query", "schema": {"type": "string"}},
                    {
                        "name": "X-Api-Version",
                        "in": "header",
                        "required": True,
                        "schema": {"type": "integer"},
                    },
                ],
                "responses": {
                    "200": {"content": {"application/json": {"example": {"items": [], "next": None}}}}
                },
            }
        },
        "/orders": {
            "post": {
                "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
                "responses": {"201": {"content": {"application/json": {"example": {"order_id": 7}}}}},
            }
        },
    },
}
PAGES = {
    "GET /items": {"body": {"items": ["a", "b"], "next": "2"}},
    "GET /items?cursor=2": {"body": {"items": ["c"], "next": "3"}},
    "GET /items?cursor=3": {"body": {"items": ["d"], "next": None}},
}
CLIENT = """import json, os, time, uuid, urllib.request, urllib.error
base = os.environ["API_BASE_URL"]
def call(method, path, body=None, idempotent=False):
    headers = dict(HEADERS)
    key = str(uuid.uuid4())
    for attempt in range(5):
        if idempotent:
            headers["Idempotency-Key"] = KEY
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(base + path, method=method, data=data, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            if error.code in (429, 503):
                time.sleep(WAIT)
                continue
            raise
    raise RuntimeError("gave up")
items, cursor = [], None
while True:
    page = call("GET", "/items" + (f"?cursor={cursor}" if cursor else ""))
    items += page["items"]
    cursor = page["next"]
    if not cursor:
        break
order = call("POST", "/orders", {"items": items}, idempotent=True)
print(json.dumps({"items": items, "order": order["order_id"]}))
"""
POLITE = {
    "HEADERS": '{"X-Api-Version": "2"}',
    "KEY": "key",
    "WAIT": 'float(error.headers.get("Retry-After") or 0)',
}


def client(**knobs: str) -> str:
    code = CLIENT
    for name, value in {**POLITE, **knobs}.items():
        code = code.replace(name, value)
    return code


def score(code: str, faults: list[dict[str, Any]] | None = None, **outputs: Any) -> EvaluationResult:
    example = Example(
        inputs={"openapi": SPEC, "api_fixtures": PAGES, "api_faults": faults or []},
        outputs={"expected_result": {"items": ["a", "b", "c", "d"], "order": 7}, **outputs},
    )
    results = APICallEvaluator().evaluate(Run(outputs={"output": code}), example)
    assert isinstance(results, EvaluationResults), results
    return results.results[0]


def checks(result: EvaluationResult) -> dict[str, bool]:
    return {c["check"]: c["passed"] for c in result.metadata["checks"]}


def test_a_paginated_endpoint_is_served_page_by_page() -> None:
    result = score(client())
    assert result.score == 1, result.comment
    assert [c["query"] for c in result.metadata["calls"][:3]] == [{}, {"cursor": "2"}, {"cursor": "3"}]


def test_a_fault_can_target_one_query() -> None:
    faults = [{"operation": "GET /items", "query": {"cursor": "3"}, "status": 503}]
    result = score(client(), faults)
    assert result.score == 1, result.comment
    faulted = [c["query"] for c in result.metadata["calls"] if c.get("fault")]
    assert faulted == [{"cursor": "3"}]


def test_a_missing_required_header_is_an_invalid_request() -> None:
    result = score(client(HEADERS="{}"))
    assert result.score == 0 and not checks(result)["valid_requests"]
    assert "header 'X-Api-Version' is required" in (result.comment or "")
    wrong_type = score(client(HEADERS='{"X-Api-Version": "two"}'))
    assert not checks(wrong_type)["valid_requests"]


@pytest.mark.parametrize(("key", "passes"), [("key", True), ("str(uuid.uuid4())", False)])
def test_a_retry_must_keep_its_idempotency_key(key: str, passes: bool) -> None:
    faults = [{"operation": "POST /orders", "status": 503}]
    result = score(client(KEY=key), faults, require_idempotency_key=True)
    assert checks(result)["idempotency"] is passes and checks(result)["retries"]
    assert result.score == int(passes), result.comment


@pytest.mark.parametrize(("wait", "passes"), [(POLITE["WAIT"], True), ("0.01", False)])
def test_a_retry_must_wait_as_retry_after_asks(wait: str, passes: bool) -> None:
    faults = [
        {"operation": "GET /items", "query": {"cursor": "2"}, "status": 429, "headers": {"Retry-After": "1"}}
    ]
    result = score(client(WAIT=wait), faults)
    assert checks(result)["retry_after"] is passes and checks(result)["retries"]
    assert result.score == int(passes), result.comment
