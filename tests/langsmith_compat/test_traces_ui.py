"""Runs stored by ``Client.create_run`` are listed on their project's page and shown as a
tree on a trace page (escaped), on both stores."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

from fastapi.testclient import TestClient

from assay import Client
from assay.ui import create_app

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def test_a_trace_is_listed_and_shown_as_a_tree(any_client: Client) -> None:
    client = any_client
    root, child = uuid.uuid4(), uuid.uuid4()
    client.create_run(
        "agent", {"q": "<script>alert(1)</script>"}, "chain", id=root, project_name="app", start_time=T0
    )
    client.create_run(
        "search-tool", {"query": "x"}, "tool", id=child, parent_run_id=root, project_name="app",
        start_time=T0 + timedelta(milliseconds=250),
    )  # fmt: skip
    client.update_run(child, error="TimeoutError: slow", end_time=T0 + timedelta(milliseconds=750))
    client.update_run(root, outputs={"answer": "done"}, end_time=T0 + timedelta(seconds=1))
    project = client.read_project(project_name="app")
    with TestClient(create_app(client.store), base_url="http://127.0.0.1:8765") as http:
        listing = http.get(f"/experiments/{project.id}")
        assert listing.status_code == 200
        assert 'id="traces"' in listing.text and f"/experiments/{project.id}/traces/{root}" in listing.text
        assert "search-tool" not in listing.text  # only root runs are listed
        page = http.get(f"/experiments/{project.id}/traces/{root}")
        assert page.status_code == 200
        text = page.text
        assert "agent" in text and "search-tool" in text and "TimeoutError: slow" in text
        assert "1000 ms" in text and "500 ms" in text  # the root's and the child's durations
        assert "+250 ms" in text  # the child's offset from the root
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "<script>alert(1)" not in text
        assert http.get(f"/experiments/{project.id}/traces/{child}").status_code == 404  # not a root
        assert http.get(f"/experiments/{project.id}/traces/{uuid.uuid4()}").status_code == 404


def test_an_experiment_without_traced_runs_has_no_traces_section(any_client: Client) -> None:
    client = any_client
    project = client.create_project("empty")
    with TestClient(create_app(client.store), base_url="http://127.0.0.1:8765") as http:
        page = http.get(f"/experiments/{project.id}")
    assert page.status_code == 200 and 'id="traces"' not in page.text
