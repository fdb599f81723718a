"""Experiments made by ``assay.evaluate`` read back through the UI's API and pages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import assay
from assay.evaluation import BaseEvaluator, EvaluationResult
from assay.schemas import Example, Run
from assay.ui import create_app


@assay.traceable(run_type="retriever")
def retrieve(question: str) -> list[str]:
    return [f"doc about {question}"]


@assay.traceable(run_type="llm")
def answer(question: str, docs: list[str]) -> str:
    return question.upper()


def target(inputs: dict[str, Any]) -> dict[str, Any]:
    if inputs["question"] == "explode":
        raise RuntimeError("the model is down")
    return {"answer": answer(inputs["question"], retrieve(inputs["question"]))}


def exact(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> bool:
    return bool(outputs["answer"] == reference_outputs["answer"])


class LengthTests(BaseEvaluator):
    """Reports per-case details the way the code evaluator does."""

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        text = (run.outputs or {})["answer"]
        cases = [
            {
                "test_case_index": i,
                "input": n,
                "expected_output": True,
                "actual_output": len(text) > n,
                "execution_success": True,
                "error_message": None,
            }
            for i, n in enumerate((0, 1))
        ]
        passed = sum(c["actual_output"] is True for c in cases)
        return EvaluationResult(
            key="length_tests", score=passed / len(cases), metadata={"test_cases_details": cases}
        )


def pass_rate(evaluation_results: list[list[EvaluationResult]]) -> dict[str, Any]:
    scores = [r.score for row in evaluation_results for r in row if r.key == "exact" and r.error is None]
    return {"key": "pass_rate", "score": sum(bool(s) for s in scores) / len(scores)}


DATA = [
    {"inputs": {"question": "ab"}, "outputs": {"answer": "AB"}},
    {"inputs": {"question": "abcd"}, "outputs": {"answer": "nope"}},
    {"inputs": {"question": "explode"}, "outputs": {"answer": "EXPLODE"}},
    {"inputs": {"question": "xyz"}, "outputs": {"answer": "XYZ"}},
]


@pytest.fixture
def results(tmp_path: Path) -> Iterator[tuple[assay.Client, Any]]:
    client = assay.Client(database_url=f"sqlite:///{tmp_path / 'e2e.db'}")
    made = assay.evaluate(
        target,
        data=DATA,
        evaluators=[exact, LengthTests()],
        summary_evaluators=[pass_rate],
        experiment="e2e",
        num_repetitions=2,
        client=client,
        progress=False,
    )
    yield client, made
    client.close()


def test_the_ui_reports_what_evaluate_computed(results: tuple[assay.Client, Any]) -> None:
    client, made = results
    with TestClient(create_app(client.store), base_url="http://127.0.0.1") as http:
        detail = http.get("/api/experiments/e2e").json()
        assert detail["experiment"]["rows"] == len(made) == 8
        assert detail["experiment"]["run_errors"] == made.target_errors == 2
        metrics = {m["key"]: m for m in detail["metrics"]}
        assert set(metrics) == set(made.aggregate)
        for key, aggregate in made.aggregate.items():
            assert metrics[key]["mean"] == pytest.approx(aggregate.mean)
            assert (metrics[key]["n"], metrics[key]["errors"]) == (aggregate.n, aggregate.errors)
            assert metrics[key]["ci_low"] == pytest.approx(aggregate.ci_low)
            assert metrics[key]["ci_high"] == pytest.approx(aggregate.ci_high)
        (summary,) = detail["summary_results"]
        assert summary["key"] == "pass_rate" and summary["score"] == pytest.approx(
            made.summary_results.results[0].score
        )

        failed = http.get("/api/experiments/e2e/rows", params={"failed": 1}).json()
        assert {(r["position"], r["repetition"]) for r in failed["rows"]} == {(1, 0), (1, 1), (2, 0), (2, 1)}
        first = http.get("/api/experiments/e2e/rows").json()["rows"][0]
        row = http.get(f"/api/experiments/e2e/rows/{first['run_id']}").json()
        assert [child["name"] for child in row["run"]["children"]] == ["retrieve", "answer"]
        assert all(child["duration_ms"] is not None for child in row["run"]["children"])
        tests = next(r for r in row["results"] if r["key"] == "length_tests")
        assert len(tests["metadata"]["test_cases_details"]) == 2

        page = http.get(f"/experiments/e2e/rows/{first['run_id']}")
        assert page.status_code == 200 and "<th>test_case_index</th>" in page.text
        explode = next(r for r in failed["rows"] if r["error"])
        errored = http.get(f"/experiments/e2e/rows/{explode['run_id']}").text
        # The target failed: the evaluators that need its outputs were skipped, not run.
        assert "the model is down" in errored and "skipped: the target failed" in errored
