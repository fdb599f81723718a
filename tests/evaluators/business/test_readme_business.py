"""The business-evaluator example of docs/evaluators.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[3] / "docs" / "evaluators.md"


@pytest.mark.slow
def test_business_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ASSAY_DATABASE_URL", raising=False)
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    block = next(b for b in blocks if "UnitTestGenerationEvaluator(max_mutants=10)" in b)
    namespace: dict = {}
    exec(compile(block, "README", "exec"), namespace)
    (row,) = list(namespace["agent_results"])
    scores = {r.key: r.score for r in row["evaluation_results"]["results"]}
    assert scores == {"release_gate": True, "trajectory_strict_match": 1, "trajectory_superset_match": 1}
    (row,) = list(namespace["test_results"])
    tests = {r.key: r.score for r in row["evaluation_results"]["results"]}
    assert tests["unit_tests_pass"] == 1 and tests["unit_tests_line_coverage"] == 1.0
    assert 0.5 < tests["unit_tests_mutation_score"] <= 1.0
