"""APICallEvaluator: generated client code in the sandbox against the mock of an OpenAPI
API, with injected faults; good, sloppy and hostile code; bad documents."""

from __future__ import annotations

import importlib.util
import socket
import threading
from typing import Any

import pytest

import assay
from assay.evaluators import APICallEvaluator
from assay.schemas import EvaluationResult, EvaluationResults, Example, Run

SPEC = """openapi: 3.0.3
info: {title: Shop, version: "1"}
servers: [{url: "https://shop.test/v1"}]
paths:
  /users/{id}:
    get:
      operationId: getUser
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
        - {name: fields, in: query, schema: {type: string}}
      responses:
        "200":
          content:
            application/json:
              example: {id: 1, name: Ada}
  /orders:
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/NewOrder"}
      responses:
        "201":
          content:
            application/json:
              examples:
                one: {value: {order_id: 7}}
components:
  schemas:
    NewOrder:
      type: object
      required: [user_id, items]
      properties:
        user_id: {type: integer}
        items: {type: array, items: {type: string}, minItems: 1}
"""
CLIENT = """import json, os, sys, time, urllib.request, urllib.error
base = os.environ["API_BASE_URL"]
assert sys.argv[1] == base
def call(method, path, body=None):
    for attempt in range(RETRIES):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(base + path, method=method, data=data,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=1) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            if error.code in (429, 500, 503):
                time.sleep(0.05)
                continue
            raise
        except TimeoutError:
            continue
    raise RuntimeError("gave up")
user = call("GET", "/users/1")
order = call("POST", "/orders", BODY)
print(json.dumps(order))
"""
GOOD = CLIENT.replace("RETRIES", "5").replace("BODY", '{"user_id": user["id"], "items": ["book"]}')
NO_RETRY = GOOD.replace("range(5)", "range(1)")
BAD_BODY = CLIENT.replace("RETRIES", "5").replace("BODY", '{"user_id": "one"}')
FAULTS = [
    {"operation": "GET /users/{id}", "status": 429, "times": 2, "headers": {"Retry-After": "0"}},
    {"operation": "POST /orders", "status": "timeout", "delay": 1.5},
]
EXPECTED = {
    "expected_calls": [
        {"method": "GET", "path": "/users/1"},
        {"method": "POST", "path": "/orders", "body": {"items": ["book"]}},
    ],
    "expected_result": {"order_id": 7},
}


def example(**inputs: Any) -> Example:
    outputs = dict(EXPECTED, **inputs.pop("outputs", {}))
    return Example(inputs={"openapi": SPEC, **inputs}, outputs=outputs)


def score(code: str, ex: Example | None = None, **kwargs: Any) -> EvaluationResult:
    results = APICallEvaluator(**kwargs).evaluate(Run(outputs={"output": code}), ex or example())
    assert isinstance(results, EvaluationResults), results
    main, fraction = results.results
    assert fraction.key == "api_calls_checks"
    main.metadata["fraction"] = fraction.score
    return main


def checks(result: EvaluationResult) -> dict[str, bool]:
    return {c["check"]: c["passed"] for c in result.metadata["checks"]}


@pytest.mark.slow
def test_good_client_recovers_from_every_injected_fault() -> None:
    result = score(GOOD, example(api_faults=FAULTS))
    assert result.score == 1, result.comment
    assert checks(result) == {
        "ran": True,
        "valid_requests": True,
        "expected_calls": True,
        "retries": True,
        "retry_after": True,  # "Retry-After: 0"
        "result": True,
    }
    calls = result.metadata["calls"]
    assert [(c["method"], c.get("status"), c.get("fault")) for c in calls] == [
        ("GET", 429, "429"),
        ("GET", 429, "429"),
        ("GET", 200, None),
        ("POST", None, "timeout"),
        ("POST", 201, None),
    ]
    assert calls[2]["response"] == {"id": 1, "name": "Ada"}
    assert calls[4]["body"] == {"user_id": 1, "items": ["book"]}
    assert calls[2]["operation_id"] == "getUser" and calls[2]["path"] == "/v1/users/1"
    assert result.metadata["sandbox"]["backend"] == "bubblewrap"


@pytest.mark.slow
def test_a_client_without_retries_fails_the_retry_check() -> None:
    result = score(NO_RETRY, example(api_faults=FAULTS))
    assert result.score == 0 and checks(result)["retries"] is False
    assert "no successful retry after the injected 429" in (result.comment or "")
    assert 0 < result.metadata["fraction"] < 1


@pytest.mark.slow
def test_an_invalid_body_is_caught_by_the_schema() -> None:
    result = score(BAD_BODY)
    assert result.score == 0 and checks(result)["valid_requests"] is False
    invalid = [c for c in result.metadata["calls"] if c.get("invalid")]
    assert invalid and invalid[0]["status"] == 400
    joined = " ".join(invalid[0]["invalid"])
    assert "'one' is not of type 'integer'" in joined and "'items' is a required property" in joined


@pytest.mark.slow
def test_call_order_and_result() -> None:
    backwards = """import json, os, urllib.request
base = os.environ["API_BASE_URL"]
req = urllib.request.Request(base + "/orders", method="POST", data=b'{"user_id": 1, "items": ["book"]}',
                             headers={"Content-Type": "application/json"})
order = json.load(urllib.request.urlopen(req))
json.load(urllib.request.urlopen(base + "/users/1?fields=name"))
print(json.dumps({"order_id": 8}))
"""
    ordered = score(backwards)
    assert checks(ordered)["expected_calls"] is False and checks(ordered)["result"] is False
    assert checks(score(backwards, ordered=False))["expected_calls"] is True


@pytest.mark.slow
def test_undeclared_paths_and_parameters_are_invalid() -> None:
    code = """import os, urllib.request, urllib.error
base = os.environ["API_BASE_URL"]
for path in ("/admin", "/users/abc", "/users/1?debug=1"):
    try:
        urllib.request.urlopen(base + path)
    except urllib.error.HTTPError as error:
        print(path, error.code)
"""
    result = score(code)
    by_path = {c["path"] + ("?" if c["query"] else ""): c for c in result.metadata["calls"]}
    assert by_path["/v1/admin"]["status"] == 404 and by_path["/v1/admin"]["undeclared"]
    assert "path parameter 'id' must be integer" in by_path["/v1/users/abc"]["invalid"][0]
    assert "undeclared query parameter(s): debug" in by_path["/v1/users/1?"]["invalid"][0]
    assert checks(result)["valid_requests"] is False


@pytest.fixture
def host_listener() -> Any:
    """A TCP server on the host's loopback: code in the sandbox must never reach it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0.2)
    accepted: list[Any] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                accepted.append(server.accept())
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    server.close()


@pytest.mark.slow
def test_code_calling_an_undeclared_host_reaches_nothing(host_listener: Any) -> None:
    port, accepted = host_listener
    code = f"""import json, os, socket, urllib.request
reached = []
for host, p in (("127.0.0.1", {port}), ("1.1.1.1", 80), ("example.com", 80)):
    try:
        socket.create_connection((host, p), timeout=1).close()
        reached.append(host)
    except OSError:
        pass
print(json.dumps(reached))
"""
    result = score(code, example(outputs={"expected_calls": [], "expected_result": []}))
    assert result.score == 1, result.comment  # it reached nothing, and says so
    assert accepted == [] and result.metadata["calls"] == []


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("requests") is None, reason="requests not installed")
def test_requests_library_works_in_the_sandbox() -> None:
    code = """import os, requests
base = os.environ["API_BASE_URL"]
user = requests.get(base + "/users/1", timeout=2).json()
order = requests.post(base + "/orders", json={"user_id": user["id"], "items": ["book"]}, timeout=2)
print(order.text)
"""
    assert score(code).score == 1


def test_fixtures_override_examples() -> None:
    from assay.evaluators.api._mock import MockAPI
    from assay.evaluators.api._openapi import load_document, parse_api

    api = parse_api(load_document(SPEC, "spec"), "spec")
    operation, params, _ = api.find("GET", "/v1/users/2")
    assert operation is not None and params == {"id": "2"} and operation.example["name"] == "Ada"
    assert api.find("DELETE", "/v1/users/2")[2] is True and api.find("GET", "/nope")[2] is False
    assert MockAPI  # the server itself is exercised end to end above


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({}, "example.inputs['openapi']"),
        ({"openapi": "openapi: 3.0.0\npaths:\n  /a: {get: {responses: {}}\n"}, "not valid YAML: line 4"),
        ({"openapi": '{\n  "openapi": "3.0.0",\n  "paths": {,}\n}'}, "not valid JSON: line 3"),
        ({"openapi": {"openapi": "2.0", "paths": {}}}, "only OpenAPI 3"),
        (
            {"openapi": SPEC.replace("#/components/schemas/NewOrder", "#/components/schemas/Nope")},
            "points nowhere",
        ),
        (
            {"openapi": SPEC, "api_faults": [{"operation": "GET /users/{id}", "status": 200}]},
            "example.inputs['api_faults'][0]['status']",
        ),
        ({"openapi": SPEC, "api_faults": [{"status": 500}]}, "example.inputs['api_faults'][0]"),
    ],
)
def test_a_bad_example_is_an_error_naming_where(inputs: dict[str, Any], message: str) -> None:
    result = APICallEvaluator().evaluate(
        Run(outputs={"output": GOOD}), Example(inputs=inputs, outputs=EXPECTED)
    )
    assert isinstance(result, EvaluationResult)
    assert result.error is not None and message in result.error, result.error


@pytest.mark.slow
def test_through_evaluate() -> None:
    codes = {"good": GOOD, "crash": "raise SystemExit(3)"}
    results = assay.evaluate(
        lambda inputs: {"output": codes[inputs["which"]]},
        data=[
            {"inputs": {"which": w, "openapi": SPEC, "api_faults": FAULTS}, "outputs": EXPECTED}
            for w in ("good", "crash")
        ],
        evaluators=[APICallEvaluator()],
        client=assay.Client(database_url="sqlite://"),
        progress=False,
    )
    scores = [row["evaluation_results"]["results"][0].score for row in results]
    assert scores == [1, 0]
