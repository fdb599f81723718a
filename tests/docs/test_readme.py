"""The README is a landing page, and its first experiment runs as a new user runs it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_the_readme_is_a_landing_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 350, f"README.md has {len(lines)} lines: move detail into docs/"
    assert max(len(line) for line in lines) < 400, "a README line is a wall of text"


def test_the_readme_links_only_to_files_that_exist() -> None:
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8")):
        assert (ROOT / target).exists(), f"README.md links to {target}, which does not exist"


def run_first_experiment(folder: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "first.py"], cwd=folder, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_the_first_experiment_runs_twice_in_a_row(tmp_path: Path) -> None:
    [block] = [b for b in python_blocks() if 'client.create_dataset("Toxic queries")' in b]
    folder = tmp_path / "new user"  # a path with a space, as a home folder may have
    folder.mkdir(mode=0o700)
    (folder / "first.py").write_text(block, encoding="utf-8")
    for attempt in (1, 2):
        done = run_first_experiment(folder)
        assert done.returncode == 0, f"run {attempt}: {done.stderr}"
        assert done.stdout.startswith("1.0 "), done.stdout
        assert "'f1'" in done.stdout or "f1" in done.stdout
    assert (folder / ".assay" / "assay.db").exists()

    from assay import Client

    client = Client(str(folder / ".assay" / "assay.db"))
    assert len(list(client.list_examples(dataset_name="Toxic queries"))) == 2
    assert len([e for e in client.list_experiments() if e.name.startswith("keywords")]) == 2


EVALUATORS_PAGE = ROOT / "docs" / "evaluators.md"


def evaluators_block(text: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", EVALUATORS_PAGE.read_text(encoding="utf-8"), re.S)
    return next(block for block in blocks if text in block)


def test_the_offline_heuristics_example_scores_what_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    namespace: dict = {}
    exec(compile(evaluators_block("create_completeness_scorer()"), "evaluators.md", "exec"), namespace)
    aggregate = namespace["results"].aggregate
    assert aggregate["exact_match"].mean == 1.0 and aggregate["completeness"].mean == 1.0
    assert aggregate["string_distance"].mean == 0.0 and aggregate["rougeL"].mean == 1.0
    assert all(metric.errors == 0 for metric in aggregate.values()), aggregate
    assert "embedding_distance" not in aggregate  # offline means no torch


def test_the_code_correctness_example_scores_what_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    namespace: dict = {}
    exec(compile(evaluators_block("CodeCorrectnessEvaluator(name="), "evaluators.md", "exec"), namespace)
    [row] = list(namespace["results"])
    [result] = row["evaluation_results"]["results"]
    assert result.key == "PythonCodeCorrectness" and result.score == 1.0
    assert [d["actual_output"] for d in result.metadata["test_cases_details"]] == [4, 9]
