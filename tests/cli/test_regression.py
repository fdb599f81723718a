"""`--baseline EXP --max-regression metric=D`: fail on a significant regression beyond D."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import run_assay, write_data

from assay import Client

GATE = ("--baseline", "base", "--max-regression", "correct=0.02")


def _run(project: Path, *extra: str, target: str = "app:answer", data: str = "big.jsonl"):  # type: ignore[no-untyped-def]
    return run_assay("run", target, "--data", data, "-e", "app:correct", *extra, cwd=project)


def test_a_significant_regression_fails_and_an_equal_run_passes(project: Path) -> None:
    write_data(project / "big.jsonl", 60, wrong_every=10**6)  # every reference right but example 0
    (project / "app.py").write_text(
        (project / "app.py").read_text() + "\n\ndef worse(inputs):\n"
        "    n = int(inputs['q'][1:])\n    return {'answer': 'nope' if n % 4 == 1 else inputs['q'].upper()}\n",
        encoding="utf-8",
    )
    assert _run(project, "--experiment", "base").returncode == 0
    same = _run(project, *GATE)
    assert same.returncode == 0, same.stdout + same.stderr
    line = next(
        line for line in same.stdout.splitlines() if line.startswith("correct regression <= 0.02 vs base")
    )
    assert "pass" in line and "+0.000" in line
    worse = _run(project, *GATE, "--json", target="app:worse")
    assert worse.returncode == 1, worse.stdout + worse.stderr
    (gate,) = json.loads(worse.stdout)["gates"]
    assert gate["passed"] is False and gate["observed"] == 0.25 and gate["threshold"] == 0.02
    assert "significantly worse, by more than 0.02" in gate["detail"]
    tolerant = _run(project, "--baseline", "base", "--max-regression", "correct=0.3", target="app:worse")
    assert tolerant.returncode == 0, tolerant.stdout  # significant, but within what is tolerated


def test_a_large_drop_on_too_few_examples_passes_with_a_note(project: Path) -> None:
    write_data(project / "few.jsonl", 4, wrong_every=10**6)
    (project / "app.py").write_text(
        (project / "app.py").read_text() + "\n\ndef one_wrong(inputs):\n"
        "    return {'answer': 'nope' if inputs['q'] == 'q1' else inputs['q'].upper()}\n",
        encoding="utf-8",
    )
    assert _run(project, "--experiment", "base", data="few.jsonl").returncode == 0
    noisy = _run(project, *GATE, target="app:one_wrong", data="few.jsonl")
    assert noisy.returncode == 0, noisy.stdout + noisy.stderr
    line = next(line for line in noisy.stdout.splitlines() if line.startswith("correct regression"))
    assert "not significant" in line and "smallest detectable difference" in line


def test_baseline_mistakes_are_usage_errors_before_the_run(project: Path) -> None:
    cases = {
        ("--max-regression", "correct=0.02"): "--max-regression needs --baseline",
        ("--baseline", "base"): "--baseline needs at least one --max-regression",
        ("--baseline", "base", "--max-regression", "correct=x"): "'x' is not a number",
        ("--baseline", "bse", "--max-regression", "correct=0.1"): "no experiment named 'bse'",
    }
    assert _run(project, "--experiment", "base", data="data.jsonl").returncode == 0
    for extra, message in cases.items():
        done = _run(project, *extra, data="data.jsonl")
        assert done.returncode == 2 and message in done.stderr, (extra, done.stderr)
    assert [r.name for r in Client(str(project / ".assay" / "assay.db")).list_experiments()] == ["base"]
    unknown = _run(project, "--baseline", "base", "--max-regression", "corect=0.1", data="data.jsonl")
    assert unknown.returncode == 2 and "corect" in unknown.stderr
