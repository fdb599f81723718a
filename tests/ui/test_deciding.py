"""Deciding across releases: the experiment list filtered, sorted and summed up, and
export buttons that write what ``assay experiments export`` writes."""

from __future__ import annotations

import csv
import html
import io
import json
from datetime import timedelta

from fastapi.testclient import TestClient
from ui_testdata import T0, RowSpec, Scenario, make_dataset, make_experiment

from assay.client import Client
from assay.row_export import experiment_records, experiment_text
from assay.ui import create_app


def names(client: TestClient, query: str) -> list[str]:
    answer = client.get(f"/api/experiments?{query}")
    assert answer.status_code == 200, answer.text
    return [x["name"] for x in answer.json()["experiments"]]


def test_the_list_filters_by_dataset_sorts_by_any_column_and_sums_up(scenario: Scenario) -> None:
    other, examples = make_dataset(scenario.store, "other", [{"inputs": {"q": "x"}}])
    make_experiment(
        scenario.store,
        "other-run",
        other,
        examples,
        [RowSpec(outputs={"a": 1}, scores={"correct": 1})],
        created=T0 + timedelta(hours=2),
    )
    with TestClient(create_app(scenario.store), base_url="http://127.0.0.1") as client:
        assert names(client, "") == ["other-run", "candidate", "baseline"]  # newest first
        assert names(client, f"dataset={scenario.dataset.id}") == ["candidate", "baseline"]
        assert names(client, "sort=name&order=asc") == ["baseline", "candidate", "other-run"]
        assert names(client, "sort=rows&order=asc") == [
            "other-run",
            "candidate",
            "baseline",
        ]  # ties: newest first
        # correct: other-run 1.0, candidate 7/12, baseline 6/12
        assert names(client, "sort=metric:correct&order=desc") == ["other-run", "candidate", "baseline"]
        assert names(client, "sort=metric:correct&order=asc") == ["baseline", "candidate", "other-run"]
        assert names(client, "sort=metric:nothing") == ["other-run", "candidate", "baseline"]  # none has it
        assert names(client, "sort=metric:correct&order=desc&per_page=1&page=2") == ["candidate"]
        bad = client.get("/api/experiments?sort=bogus")
        assert (
            bad.status_code == 400 and "unknown sort 'bogus'; accepted: created, name" in bad.json()["detail"]
        )
        listing = client.get("/api/experiments?sort=name&order=asc").json()["experiments"]
        assert listing[0]["summary_scores"] == {"pass_rate": 0.5, "f1": None}
        page = client.get(f"/experiments?dataset={scenario.dataset.id}&sort=name&order=asc").text
        assert (
            page.index(">baseline<") < page.index(">candidate<")
            and "other-run" not in page.split("<tbody>")[1]
        )
        assert "pass_rate" in page


def test_export_buttons_write_what_the_cli_writes(scenario: Scenario) -> None:
    client = Client(store=scenario.store)
    expected = experiment_records(scenario.store, client.read_experiment("baseline"))
    with TestClient(create_app(scenario.store), base_url="http://127.0.0.1") as http:
        page = http.get("/experiments/baseline").text
        assert 'id="export-csv"' in page and 'id="export-jsonl"' in page
        as_jsonl = http.get(f"/experiments/{scenario.baseline.id}/export.jsonl")
        as_csv = http.get(f"/experiments/{scenario.baseline.id}/export.csv")
        compared = http.get(f"/compare/export.csv?e={scenario.baseline.id}&e={scenario.candidate.id}")
        compare_page = http.get(f"/compare?e={scenario.baseline.id}&e={scenario.candidate.id}").text
        wrong = http.get(f"/experiments/{scenario.baseline.id}/export.xml")
    assert as_jsonl.headers["content-disposition"] == 'attachment; filename="baseline.jsonl"'
    assert [json.loads(line) for line in as_jsonl.text.splitlines()] == json.loads(
        json.dumps(expected, default=str)
    )
    assert as_csv.text == experiment_text(expected, "csv") and as_csv.headers["content-type"].startswith(
        "text/csv"
    )
    rows = list(csv.DictReader(io.StringIO(compared.text)))
    correct = {r["experiment"]: r for r in rows if r["metric"] == "correct"}
    assert (
        correct["baseline"]["baseline"] == "True"
        and correct["candidate"]["verdict"] == "no detectable difference"
    )
    assert float(correct["candidate"]["difference"]) == 1 / 12
    assert "export-compare-csv" in html.unescape(compare_page)
    assert wrong.status_code == 400
