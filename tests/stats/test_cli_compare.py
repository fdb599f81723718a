"""``assay compare A B`` as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from stats_testdata import dataset, experiment

from assay.store.sqlite import SQLiteStore


def assay(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "220"}
    return subprocess.run(
        [sys.executable, "-m", "assay.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_compare_prints_verdicts_and_json(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    ds, examples = dataset(store, 40)
    experiment(
        store,
        ds,
        examples,
        "base",
        {"ok": [[True]] * 40, "dist": [[0.3]] * 40},
        info={"dist": {"direction": "lower"}},
    )
    experiment(
        store,
        ds,
        examples,
        "cand",
        {"ok": [[True]] * 20 + [[False]] * 20, "dist": [[0.3]] * 40},
        info={"dist": {"direction": "lower"}},
    )
    store.close()
    shown = assay("--db", "s.db", "compare", "base", "cand", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    for text in ("exact McNemar", "Newcombe", "worse", "no detectable difference", "0 (equal)", "↓"):
        assert text in shown.stdout, text
    as_json = assay("compare", "base", "cand", "--json", "--db", "s.db", cwd=tmp_path)
    data = json.loads(as_json.stdout)
    by_key = {m["key"]: m for m in data["metrics"]}
    assert by_key["ok"]["verdict"] == "worse" and by_key["ok"]["difference"] == -0.5
    assert by_key["dist"]["difference"] == 0.0 and by_key["dist"]["p_value"] == 1.0
    assert by_key["ok"]["ci_method"] == "Newcombe" and by_key["ok"]["n_paired"] == 40


def test_compare_names_what_differs_as_a_message(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    first, ex1 = dataset(store, 3)
    second, ex2 = dataset(store, 3)
    experiment(store, first, ex1, "one", {"m": [[1.0]] * 3})
    experiment(store, second, ex2, "two", {"m": [[1.0]] * 3})
    store.close()
    shown = assay("--db", "s.db", "compare", "one", "two", cwd=tmp_path)
    assert shown.returncode == 2 and "Traceback" not in shown.stderr
    assert "'one' on dataset" in shown.stderr and "'two' on dataset" in shown.stderr
    missing = assay("--db", "s.db", "compare", "one", "nope", cwd=tmp_path)
    assert missing.returncode == 2 and "no experiment 'nope'" in missing.stderr


def test_every_metric_name_and_verdict_is_whole_at_80_columns_and_in_a_pipe(tmp_path: Path) -> None:
    """The table cut names and verdicts to `cor…` and `no det… dif…` at 80-100 columns."""
    from rich.console import Console

    from assay.comparison import compare
    from assay.report.terminal import print_comparison

    long_names = ["correctness_of_the_final_answer", "faithfulness_to_the_retrieved_context", "latency_ms"]
    store = SQLiteStore(tmp_path / "s.db")
    ds, examples = dataset(store, 30)
    experiment(store, ds, examples, "baseline-run", {k: [[True]] * 30 for k in long_names})
    experiment(
        store,
        ds,
        examples,
        "candidate-run",
        {**{k: [[True]] * 30 for k in long_names}, long_names[0]: [[False]] * 30},
    )
    store.close()
    env = {**os.environ, "COLUMNS": "80"}
    piped = subprocess.run(
        [sys.executable, "-m", "assay.cli", "--db", "s.db", "compare", "baseline-run", "candidate-run"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    as_json = json.loads(
        assay("--db", "s.db", "compare", "baseline-run", "candidate-run", "--json", cwd=tmp_path).stdout
    )
    verdicts = {m["key"]: m["verdict"] for m in as_json["metrics"]}
    assert verdicts[long_names[0]] == "worse" and verdicts[long_names[1]] == "no detectable difference"
    lines = piped.stdout.splitlines()
    for key, verdict in verdicts.items():
        assert f"{key}: {verdict}" in lines, piped.stdout
    assert "…" not in piped.stdout

    from assay import Client

    comparison = compare("baseline-run", "candidate-run", client=Client(str(tmp_path / "s.db")))
    terminal = Console(width=80, force_terminal=True, record=True, color_system=None)
    print_comparison(comparison, terminal)
    shown = terminal.export_text()
    assert "…" not in shown
    for key, verdict in verdicts.items():
        assert f"{key}: {verdict}" in shown
    wide = Console(width=250, force_terminal=True, record=True, color_system=None)
    print_comparison(comparison, wide)
    assert "p / Holm p" in wide.export_text().splitlines()[2]  # the table, when it fits
