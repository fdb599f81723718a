"""The feedback write, its read-back and the queue's SQL on both stores: a SQLite file
and PostgreSQL (whose feedback scores are JSON text and whose SQL is translated)."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from ui_testdata import BASELINE_FAILED, build_scenario

from assay.store import open_store
from assay.ui import create_app

ORIGIN = "http://127.0.0.1:8765"


def test_label_read_back_and_queue_on_each_store(store_url: str) -> None:
    store = open_store(store_url)
    try:
        scenario = build_scenario(store)
        with TestClient(create_app(store), base_url=ORIGIN) as client:
            failed = client.get("/queue?e=baseline&annotator=Ann&rule=failed").text
            assert f"0 of {len(BASELINE_FAILED)} labelled" in failed
            url = "/queue?e=baseline&annotator=Ann&rule=unsure&n=4"
            for choice in ("up", "down", "down"):
                page = client.get(url).text
                action = re.search(r'id="annotate" method="post" action="([^"]+)"', page)
                token = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
                assert action and token
                saved = client.post(
                    action.group(1),
                    data={"csrf": token.group(1), "annotator": "Ann", "key.human": choice, "next": url},
                    headers={"origin": ORIGIN},
                    follow_redirects=False,
                )
                assert saved.status_code == 303, saved.text
            assert "3 of 4 labelled" in client.get(url).text
            metric = client.get("/api/experiments/baseline").json()["human_metrics"][0]
            rows = client.get("/api/experiments/baseline/rows?per_page=100").json()["rows"]
        assert metric["mean"] == pytest.approx(1 / 3) and metric["rows"] == 3
        assert sorted(cell["score"] for row in rows for cell in row["human"]) == [0.0, 0.0, 1.0]
        scores = sorted(f.score for f in store.list_feedback(keys=["human"]))
        assert scores == [0, 0, 1] and all(isinstance(s, int) for s in scores)
        assert scenario.baseline.id is not None
    finally:
        store.close()
