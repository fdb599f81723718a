"""The README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def block_containing(text: str) -> str:
    return next(block for block in python_blocks() if text in block)


def test_first_experiment_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    namespace: dict = {}
    exec(compile(block_containing('client.create_dataset("Toxic queries")'), "README", "exec"), namespace)
    results = namespace["results"]
    assert results.aggregate["correct"].mean == 1.0
    assert results.summary_results.results[0].score == 1.0
    assert (tmp_path / ".assay" / "assay.db").exists()
    assert "1.0" in capsys.readouterr().out


def test_heuristic_example_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ASSAY_EMBEDDINGS", "local")
    from assay import Client
    from assay import evaluate as real_evaluate

    outcome: dict = {}

    def evaluate(target, **kwargs):
        outcome["results"] = real_evaluate(target, client=Client("sqlite://"), **kwargs)
        return outcome["results"]

    namespace = {
        "evaluate": evaluate,
        "app": lambda inputs: {"output": inputs["q"]},
        "data": [{"inputs": {"q": '{"a": 1}'}, "outputs": {"output": '{"a": 1}'}}],
    }
    exec(compile(block_containing("create_completeness_scorer()"), "README", "exec"), namespace)
    aggregate = outcome["results"].aggregate
    assert aggregate["exact_match"].mean == 1.0 and aggregate["completeness"].mean == 1.0
    assert aggregate["string_distance"].mean == 0.0 and aggregate["rougeL"].mean == 1.0
    assert all(metric.errors == 0 for metric in aggregate.values()), aggregate


def test_code_correctness_example_runs(tmp_path: Path) -> None:
    from assay import Client

    client = Client(str(tmp_path / "assay.db"))
    namespace: dict = {"client": client}
    exec(compile(block_containing("CodeCorrectnessEvaluator(name="), "README", "exec"), namespace)
    results = namespace["results"]
    [row] = list(results)
    [result] = row["evaluation_results"]["results"]
    assert result.key == "PythonCodeCorrectness" and result.score == 1.0
    assert [d["actual_output"] for d in result.metadata["test_cases_details"]] == [4, 9]
