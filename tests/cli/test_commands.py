"""The other commands: --help, --version, show, datasets import/export, experiments export/delete."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pyarrow.parquet as pq
from tests.cli.conftest import run_assay

from assay import Client

COMMANDS = {"run", "rescore", "compare", "demo", "ui", "show", "datasets", "experiments"}


def test_help_lists_every_command_with_a_line_and_version(tmp_path: Path) -> None:
    done = run_assay("--help", cwd=tmp_path)
    assert done.returncode == 0
    described = dict(re.findall(r"^    (\w+)\s+(\S.*)$", done.stdout, re.M))
    # a long command name puts its description on the next line
    for name in re.findall(r"^    (\w+)\n\s{10,}(\S.*)$", done.stdout, re.M):
        described.setdefault(name, "...")
    assert COMMANDS <= set(described), done.stdout
    version = run_assay("--version", cwd=tmp_path)
    assert version.returncode == 0 and re.fullmatch(r"assay \d+\.\d+\.\d+\S*\n", version.stdout)


def test_show_suggests_close_names_and_gates_a_stored_experiment(project: Path) -> None:
    run_assay(
        "run",
        "app:answer",
        "--data",
        "data.jsonl",
        "-e",
        "app:correct",
        "--experiment",
        "nightly-1",
        cwd=project,
    )
    missing = run_assay("show", "nightly1", cwd=project)
    assert missing.returncode == 2 and "did you mean 'nightly-1'?" in missing.stderr
    shown = run_assay("show", "nightly-1", "--fail-under", "correct=0.9", cwd=project)
    assert shown.returncode == 1 and "correct >= 0.9" in shown.stdout and "\x1b[" not in shown.stdout


def test_datasets_import_and_export_round_trip(project: Path) -> None:
    imported = run_assay("datasets", "import", "data.jsonl", "--name", "qa", cwd=project)
    assert imported.returncode == 0 and "imported 10 examples into dataset 'qa'" in imported.stdout
    again = run_assay("datasets", "import", "data.jsonl", "--name", "qa", cwd=project)
    assert again.returncode == 2 and "already exists" in again.stderr
    exported = run_assay("datasets", "export", "qa", cwd=project)
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    original = [json.loads(line) for line in (project / "data.jsonl").read_text().splitlines()]
    assert [{"inputs": r["inputs"], "outputs": r["outputs"]} for r in records] == original
    as_csv = run_assay("datasets", "export", "qa", "--format", "csv", "-o", "qa.csv", cwd=project)
    assert as_csv.returncode == 0
    rows = list(csv.DictReader(io.StringIO((project / "qa.csv").read_text())))
    assert rows[1] == {"inputs.q": "q1", "outputs.answer": "Q1"}
    back = run_assay("datasets", "import", "qa.csv", "--name", "qa-csv", cwd=project)
    assert back.returncode == 0, back.stderr
    client = Client(str(project / ".assay" / "assay.db"))
    assert [e.inputs for e in client.list_examples(dataset_name="qa-csv")] == [r["inputs"] for r in original]
    listed = run_assay("datasets", cwd=project)
    assert "qa-csv" in listed.stdout
    # a run on the imported dataset, by name
    assert run_assay("run", "app:answer", "--data", "qa", "-e", "app:correct", cwd=project).returncode == 0


def test_experiments_export_as_jsonl_csv_parquet_then_delete(project: Path) -> None:
    run_assay(
        "run", "app:answer", "--data", "data.jsonl", "-e", "app:correct", "--experiment", "x", cwd=project
    )
    jsonl = run_assay("experiments", "export", "x", cwd=project)
    rows = [json.loads(line) for line in jsonl.stdout.splitlines()]
    assert len(rows) == 10 and rows[1]["outputs"] == {"answer": "Q1"}
    assert rows[0]["results"][0]["key"] == "correct" and rows[0]["results"][0]["score"] == 0.0
    assert (
        run_assay("experiments", "export", "x", "--format", "csv", "-o", "out/x.csv", cwd=project).returncode
        == 0
    )
    table = list(csv.DictReader(io.StringIO((project / "out" / "x.csv").read_text(encoding="utf-8"))))
    assert table[1]["score.correct"] == "1.0" and table[1]["inputs.q"] == "q1"
    parquet = run_assay(
        "experiments", "export", "x", "--format", "parquet", "-o", "out/x.parquet", cwd=project
    )
    assert parquet.returncode == 0, parquet.stderr
    frame = pq.read_table(project / "out" / "x.parquet").to_pylist()
    assert len(frame) == 10 and frame[1]["score.correct"] == 1.0 and frame[1]["outputs.answer"] == "Q1"
    no_file = run_assay("experiments", "export", "x", "--format", "parquet", cwd=project)
    assert no_file.returncode == 2 and "needs -o" in no_file.stderr
    deleted = run_assay("experiments", "delete", "x", cwd=project)
    assert deleted.returncode == 0 and "deleted experiment 'x' (10 rows)" in deleted.stdout
    assert run_assay("show", "x", cwd=project).returncode == 2
    client = Client(str(project / ".assay" / "assay.db"))
    assert client.store.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    assert client.store.conn.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 0


def test_read_only_commands_do_not_create_a_store(tmp_path: Path) -> None:
    for args in (
        ("experiments",),
        ("datasets", "export", "x"),
        ("experiments", "delete", "x"),
        ("show", "x"),
    ):
        done = run_assay(*args, cwd=tmp_path)
        assert done.returncode == 2 and "no store at" in done.stderr
    assert not (tmp_path / ".assay").exists()
