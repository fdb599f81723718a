"""Schemathesis against the service's own OpenAPI document, served by a real uvicorn server:
every generated request (valid and not) gets a documented status and a body matching the
documented schema, and never a 500."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from service_testing import LIGHT, TOKEN, LiveService


@pytest.fixture(scope="module")
def service() -> Iterator[LiveService]:
    with LiveService(LIGHT, token=TOKEN) as live:
        yield live


AUTH = {"authorization": f"Bearer {TOKEN}"}


@pytest.mark.slow
def test_the_api_keeps_to_its_document(service: LiveService) -> None:
    schema = schemathesis.openapi.from_url(f"{service.url}/openapi.json", headers=AUTH)
    checked = []
    for result in schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
        def keeps_to_the_document(case: Any) -> None:
            case.call_and_validate(headers=AUTH)

        keeps_to_the_document()
        checked.append(operation.label)
    assert sorted(checked) == [
        "GET /evaluators",
        "GET /health",
        "POST /evaluators/{name}/evaluate",
    ]


def test_the_document_describes_the_evaluate_operation(service: LiveService) -> None:
    document = httpx.get(f"{service.url}/openapi.json", headers={"authorization": f"Bearer {TOKEN}"}).json()
    operation = document["paths"]["/evaluators/{name}/evaluate"]["post"]
    assert {"200", "401", "404", "413", "422", "429"} <= set(operation["responses"])
    body = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert body.endswith("/EvaluateRequest")
    assert {"Run", "Example", "EvaluationResult", "EvaluateResponse"} <= set(
        document["components"]["schemas"]
    )
