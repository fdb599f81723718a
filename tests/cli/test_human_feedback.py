"""People's labels (human feedback records, as the UI and Client.create_feedback make
them) in ``assay experiments export`` and ``assay show``."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from tests.cli.conftest import run_assay

from assay import Client


def label(client: Client, run_id: object, annotator: str, key: str, **fields: object) -> None:
    client.create_feedback(
        run_id,
        key,
        feedback_source_type="human",
        source_info={"annotator": annotator},
        **fields,  # type: ignore[arg-type]
    )


def test_export_and_show_carry_peoples_labels(project: Path) -> None:
    run_assay(
        "run", "app:answer", "--data", "data.jsonl", "-e", "app:correct", "--experiment", "x", cwd=project
    )
    client = Client(str(project / ".assay" / "assay.db"))
    runs = [row.run.id for row in client.read_experiment("x").rows]
    label(client, runs[0], "Ann", "helpful", score=1, value="up")
    label(client, runs[0], "Ben", "helpful", score=0, value="down")
    label(client, runs[1], "Ann", "helpful", score=0, value="down")
    label(client, runs[1], "Ann", "helpful", score=1, value="up")  # she changed her mind: the latest counts
    label(client, runs[1], "Ann", "note", comment="fine", correction={"answer": "Q1!"})
    client.create_feedback(runs[2], "helpful", score=0)  # from a program, not a person: left out
    client.store.close()

    rows = [
        json.loads(line) for line in run_assay("experiments", "export", "x", cwd=project).stdout.splitlines()
    ]
    assert sorted((h["annotator"], h["score"]) for h in rows[0]["human"]) == [("Ann", 1), ("Ben", 0)]
    assert [(h["key"], h["score"]) for h in rows[1]["human"] if h["key"] == "helpful"] == [("helpful", 1)]
    assert [h["correction"] for h in rows[1]["human"] if h["key"] == "note"] == [{"answer": "Q1!"}]
    assert rows[2]["human"] == []

    run_assay("experiments", "export", "x", "--format", "csv", "-o", "x.csv", cwd=project)
    table = list(csv.DictReader(io.StringIO((project / "x.csv").read_text(encoding="utf-8"))))
    assert [table[i]["human.helpful"] for i in range(3)] == ["0.5", "1.0", ""]

    shown = run_assay("show", "x", cwd=project)
    assert shown.returncode == 0, shown.stderr
    # rows: 0.5 and 1 -> mean 0.75, two rows, two annotators, Student t (not every row 0/1)
    assert "human feedback" in shown.stdout
    assert "  helpful: 0.750 [" in shown.stdout and "Student t (2 rows, 2 annotators)" in shown.stdout

    payload = json.loads(run_assay("show", "x", "--json", cwd=project).stdout)
    helpful = payload["human"]["helpful"]
    assert helpful["mean"] == 0.75 and helpful["rows"] == 2 and helpful["annotators"] == 2
    assert helpful["ci_low"] < 0.75 < helpful["ci_high"] and helpful["ci_method"].startswith("Student t")
    mine = sorted(
        (h["run_id"] == str(runs[0]), h["annotator"], h["key"], h["score"]) for h in payload["human_labels"]
    )
    assert mine == [
        (False, "Ann", "helpful", 1),
        (False, "Ann", "note", None),
        (True, "Ann", "helpful", 1),
        (True, "Ben", "helpful", 0),
    ]
    assert [h["correction"] for h in payload["human_labels"] if h["key"] == "note"] == [{"answer": "Q1!"}]
