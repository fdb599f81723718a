"""The Client's dataset and experiment methods, LangSmith-shaped."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from assay import Client
from assay.evaluation import BaseEvaluator, EvaluationResult, ExperimentResults
from assay.schemas import Example, Run
from assay.store import NotFoundError


def test_dataset_lifecycle(client: Client) -> None:
    created = client.create_dataset("cities", description="capitals")
    assert client.read_dataset(dataset_name="cities").id == created.id
    assert client.read_dataset(dataset_id=str(created.id)).name == "cities"
    assert [d.name for d in client.list_datasets()] == ["cities"]
    client.delete_dataset(dataset_name="cities")
    assert client.list_datasets() == []
    with pytest.raises(NotFoundError, match="no dataset named 'cities'"):
        client.read_dataset(dataset_name="cities")


def test_create_example_and_both_create_examples_forms(client: Client) -> None:
    dataset = client.create_dataset("d")
    one = client.create_example({"q": "a"}, outputs={"r": 1}, metadata={"m": 1}, dataset_id=dataset.id)
    client.create_examples(
        inputs=[{"q": "b"}, {"q": "c"}],
        outputs=[{"r": 2}, {"r": 3}],
        metadata=[None, {"m": 3}],
        dataset_name="d",
    )
    client.create_examples(examples=[{"inputs": {"q": "d"}, "outputs": {"r": 4}}], dataset_id=dataset.id)
    listed = client.list_examples(dataset_name="d")
    assert [e.inputs["q"] for e in listed] == ["a", "b", "c", "d"]
    assert listed[0].id == one.id and listed[0].metadata == {"m": 1}
    assert [e.outputs["r"] for e in listed] == [1, 2, 3, 4]
    assert client.list_examples(dataset_name="d", offset=1, limit=2)[0].inputs == {"q": "b"}
    assert client.read_dataset(dataset_name="d").example_count == 4


def test_create_examples_rejects_mismatched_forms(client: Client) -> None:
    client.create_dataset("d")
    with pytest.raises(ValueError, match="outputs has 1 items but inputs has 2"):
        client.create_examples(inputs=[{}, {}], outputs=[{}], dataset_name="d")
    with pytest.raises(ValueError, match="examples\\[0\\] must have 'inputs'"):
        client.create_examples(examples=[{"input": {}}], dataset_name="d")
    assert client.list_examples(dataset_name="d") == []


class CodeishEvaluator(BaseEvaluator):
    """Seed 003's shape: __init__(name, **kwargs), _evaluate(run, example)."""

    def __init__(self, name: str = "CodeishEvaluator", **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        self.expected_func_name = kwargs.get("func_name", "solution")

    def _evaluate(self, run: Run, example: Example | None = None) -> EvaluationResult:
        code = (run.outputs or {}).get("text", "")
        ok = f"def {self.expected_func_name}(" in code
        return EvaluationResult(
            key=self.name, score=1.0 if ok else 0.0, feedback="defined" if ok else "missing"
        )


def test_run_on_dataset_as_in_seed_003(client: Client) -> None:
    dataset_name = "Python Code Generation Test Cases"
    dataset = client.create_dataset(dataset_name=dataset_name, description="code")
    for question in ("square", "reverse"):
        client.create_example(
            dataset_id=dataset.id, inputs={"question": question}, outputs={"expected_test_cases": []}
        )

    def code_generation_runnable(example_inputs: dict) -> dict:
        return {
            "text": "def solution(n):\n    return n * n" if example_inputs["question"] == "square" else "pass"
        }

    evaluation_results = client.run_on_dataset(
        dataset_name=dataset_name,
        llm_or_chain_factory=code_generation_runnable,
        evaluators=[
            CodeishEvaluator(name="PythonCodeCorrectness", execution_timeout=5, func_name="solution")
        ],
        project_name="Code Correctness Evaluation Demo - Run",
        concurrency_level=1,
        verbose=False,
    )
    assert isinstance(evaluation_results, ExperimentResults)
    assert isinstance(evaluation_results.id, uuid.UUID)
    assert evaluation_results.experiment_name == "Code Correctness Evaluation Demo - Run"
    assert evaluation_results.aggregate["PythonCodeCorrectness"].mean == 0.5
    [record] = client.list_experiments()
    assert record.name == "Code Correctness Evaluation Demo - Run" and record.id == evaluation_results.id
    stored = client.read_experiment("Code Correctness Evaluation Demo - Run")
    assert [r["evaluation_results"]["results"][0].feedback for r in stored] == ["defined", "missing"]


def test_read_missing_experiment_is_clear(client: Client) -> None:
    with pytest.raises(NotFoundError, match="no experiment named 'nope'"):
        client.read_experiment("nope")


def test_to_pandas(client: Client, examples: list[dict]) -> None:
    def ok(outputs) -> bool:
        return True

    frame = client.evaluate(lambda inputs: {"y": inputs["x"]}, data=examples, evaluators=[ok]).to_pandas()
    assert list(frame["inputs.x"]) == list(range(6)) and list(frame["feedback.ok"]) == [True] * 6
