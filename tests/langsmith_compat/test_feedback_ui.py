"""Feedback from ``Client.create_feedback`` appears on the run's row page (escaped) and in
the row's JSON export."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from assay import Client, evaluate
from assay.ui import create_app


def test_feedback_is_on_the_row_page_and_in_its_json(tmp_path: Path) -> None:
    client = Client(str(tmp_path / "s.db"))
    results = evaluate(lambda inputs: {"y": 1}, data=[{"x": 1}], client=client, experiment="fb")
    run_id = results.rows[0].run.id
    client.create_feedback(
        run_id,
        "reviewer",
        score=0,
        comment="<script>alert(1)</script> wrong",
        correction={"y": 2},
        source_info={"who": "ana"},
    )
    with TestClient(create_app(client.store), base_url="http://127.0.0.1:8765") as http:
        page = http.get(f"/experiments/fb/rows/{run_id}")
        assert page.status_code == 200
        assert 'id="feedback"' in page.text and "reviewer" in page.text
        assert "&lt;script&gt;alert(1)&lt;/script&gt; wrong" in page.text and "<script>alert" not in page.text
        exported = http.get(f"/api/experiments/fb/rows/{run_id}").json()
    [feedback] = exported["feedback"]
    assert feedback["key"] == "reviewer" and feedback["score"] == 0
    assert feedback["correction"] == {"y": 2} and feedback["source"]["metadata"] == {"who": "ana"}
    client.close()


def test_a_row_without_feedback_shows_no_feedback_section(tmp_path: Path) -> None:
    client = Client(str(tmp_path / "s.db"))
    results = evaluate(lambda inputs: {"y": 1}, data=[{"x": 1}], client=client, experiment="plain")
    with TestClient(create_app(client.store), base_url="http://127.0.0.1:8765") as http:
        page = http.get(f"/experiments/plain/rows/{results.rows[0].run.id}")
        exported = http.get(f"/api/experiments/plain/rows/{results.rows[0].run.id}").json()
    assert 'id="feedback"' not in page.text and exported["feedback"] == []
    client.close()
