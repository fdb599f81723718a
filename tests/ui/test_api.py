"""The JSON API and the pages, through the real ASGI app over a real SQLite store and a
real PostgreSQL one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from ui_testdata import BASELINE_FAILED, REGRESSIONS, N, Scenario, build_scenario

from assay.store import Store, open_store
from assay.ui import create_app


# Every test here only reads (GET requests), so the module builds its scenario once per
# backend instead of once per test (~1 s of set-up each, 34 tests).
@pytest.fixture(scope="module")
def store(module_store_url: str) -> Iterator[Store]:
    opened = open_store(module_store_url)
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def scenario(store: Store) -> Scenario:
    return build_scenario(store)


@pytest.fixture(scope="module")
def client(scenario: Scenario) -> Iterator[TestClient]:
    with TestClient(create_app(scenario.store), base_url="http://127.0.0.1:8765") as test_client:
        yield test_client


def test_experiment_list_and_detail(client: TestClient, scenario: Scenario) -> None:
    listing = client.get("/api/experiments").json()
    assert [e["name"] for e in listing["experiments"]] == ["candidate", "baseline"]
    detail = client.get("/api/experiments/baseline").json()
    assert detail["experiment"]["id"] == str(scenario.baseline.id)
    metrics = {m["key"]: m for m in detail["metrics"]}
    assert metrics["judge"]["errors"] == 1 and metrics["judge"]["mean"] == 1.0
    assert metrics["correct"]["ci_low"] < 0.5 < metrics["correct"]["ci_high"]
    assert [s["key"] for s in detail["summary_results"]] == ["pass_rate", "f1"]
    assert detail["config"] == {"target": "fixture"}
    listed = next(e for e in listing["experiments"] if e["name"] == "baseline")
    assert detail["experiment"]["metric_means"] == listed["metric_means"] != {}


def test_rows_filter_sort_and_page(client: TestClient) -> None:
    failed = client.get("/api/experiments/baseline/rows", params={"failed": "true"}).json()
    assert [r["position"] for r in failed["rows"]] == BASELINE_FAILED
    assert failed["filter"]["failed"] is True and failed["metric_keys"] == ["correct", "quality", "judge"]
    below = client.get(
        "/api/experiments/baseline/rows",
        params={"metric": "quality", "below": "0.6", "per_page": 2, "page": 2},
    ).json()
    assert below["total"] == 6 and [r["position"] for r in below["rows"]] == [5, 7]
    ordered = client.get(
        "/api/experiments/baseline/rows", params={"sort": "metric:quality", "order": "desc"}
    ).json()
    assert [r["position"] for r in ordered["rows"]][:6] == [0, 2, 4, 6, 8, 10]


def test_row_detail(client: TestClient) -> None:
    rows = client.get("/api/experiments/baseline/rows").json()["rows"]
    detail = client.get(f"/api/experiments/baseline/rows/{rows[1]['run_id']}").json()
    assert detail["outputs"] == {"answer": "wrong 1"}
    assert detail["reference_outputs"] == {"answer": "answer 1"}
    correct = next(r for r in detail["results"] if r["key"] == "correct")
    assert len(correct["metadata"]["test_cases_details"]) == 3


def test_compare(client: TestClient) -> None:
    page = client.get(
        "/api/compare", params=[("e", "baseline"), ("e", "candidate"), ("show", "regressions")]
    ).json()
    assert [r["position"] for r in page["rows"]] == REGRESSIONS
    assert page["metric_keys"] == ["correct", "quality", "judge"]


def test_datasets_and_examples(client: TestClient) -> None:
    (dataset,) = client.get("/api/datasets").json()
    assert (dataset["name"], dataset["example_count"], dataset["version"]) == ("qa", N, 1)
    page = client.get(
        f"/api/datasets/{dataset['id']}/examples", params={"q": "question 1", "per_page": 2}
    ).json()
    assert page["total"] == 3 and [e["position"] for e in page["examples"]] == [1, 10]


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/api/experiments/nope", 404, "no experiment with id or name 'nope'"),
        (
            "/api/experiments/baseline/rows?below=abc&metric=quality",
            400,
            "parameter 'below' must be a number, got 'abc'",
        ),
        ("/api/experiments/baseline/rows?sort=nope", 400, "unknown sort 'nope'"),
        ("/api/experiments/baseline/rows?per_page=100000", 400, "parameter 'per_page'"),
        ("/api/datasets/nope/examples", 404, "no dataset with id or name 'nope'"),
        ("/api/datasets/qa/examples?version=1.5", 400, "parameter 'version' must be a whole number"),
        ("/api/compare?e=baseline", 400, "compare needs at least two experiments"),
        ("/api/compare?e=baseline&e=candidate&show=sideways", 400, "parameter 'show'"),
    ],
)
def test_api_errors_are_json_and_name_the_problem(
    client: TestClient, path: str, status: int, message: str
) -> None:
    response = client.get(path)
    assert response.status_code == status
    assert message in response.json()["detail"]


def test_page_errors_are_pages_that_name_the_problem(client: TestClient) -> None:
    response = client.get("/experiments/baseline?metric=quality&below=abc")
    assert response.status_code == 400 and response.headers["content-type"].startswith("text/html")
    assert "parameter &#39;below&#39; must be a number, got &#39;abc&#39;" in response.text
    missing = client.get("/experiments/nope/rows/x")
    assert missing.status_code == 404 and "no experiment with id or name &#39;nope&#39;" in missing.text


def test_openapi_documents_every_api_route(client: TestClient) -> None:
    schema = client.get("/api/openapi.json").json()
    assert set(schema["paths"]) == {
        "/api/datasets",
        "/api/datasets/{ref}/examples",
        "/api/experiments",
        "/api/experiments/{ref}",
        "/api/experiments/{ref}/rows",
        "/api/experiments/{ref}/rows/{run_id}",
        "/api/compare",
    }
    assert "RowDetail" in schema["components"]["schemas"]


def test_every_page_renders(client: TestClient, scenario: Scenario) -> None:
    rows = client.get("/api/experiments/baseline/rows").json()["rows"]
    pages = [
        "/experiments",
        "/experiments?q=base",
        f"/experiments/{scenario.baseline.id}",
        "/experiments/baseline?failed=1&sort=metric:judge&order=desc",
        f"/experiments/baseline/rows/{rows[0]['run_id']}",
        f"/experiments/baseline/rows/{rows[4]['run_id']}",
        "/datasets",
        "/datasets/qa",
        "/datasets/qa?version=1&q=question",
        "/compare",
        "/compare?e=baseline&e=candidate&show=changed&metric=correct",
    ]
    for path in pages:
        response = client.get(path)
        assert response.status_code == 200, (path, response.text[:500])
        assert response.headers["content-type"].startswith("text/html")
    assert client.get("/", follow_redirects=False).headers["location"] == "/experiments"


def test_the_row_page_shows_metadata_tables_tracebacks_and_the_trace(client: TestClient) -> None:
    rows = client.get("/api/experiments/baseline/rows").json()["rows"]
    first = client.get(f"/experiments/baseline/rows/{rows[0]['run_id']}").text
    assert first.count('class="run') >= 4 and "tokenize" in first and "4 ms" in first
    second = client.get(f"/experiments/baseline/rows/{rows[1]['run_id']}").text
    assert "<th>expected_output</th>" in second and 'class="row-bad"' in second
    sql = client.get(f"/experiments/baseline/rows/{rows[2]['run_id']}").text
    assert "<th>city</th>" in sql and '<td><span class="v-string">Nice</span></td>' in sql
    errored = client.get(f"/experiments/baseline/rows/{rows[4]['run_id']}").text
    assert 'class="block traceback"' in errored and "ValueError: judge broke" in errored
