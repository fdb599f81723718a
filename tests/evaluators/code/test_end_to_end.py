"""Seed 003 end to end: a dataset, a target, the evaluator, assay.evaluate, the store."""

from __future__ import annotations

from typing import Any

import pytest

import assay
from assay.evaluators import CodeCorrectnessEvaluator

SEED_EXAMPLES = [
    {
        "input": "编写一个Python函数，名为`solution`，接收一个整数`n`，返回`n`的平方。",
        "test_cases": [
            {"input": 2, "expected_output": 4},
            {"input": 0, "expected_output": 0},
            {"input": -3, "expected_output": 9},
        ],
    },
    {
        "input": "请实现一个Python函数`solution`，计算给定整数列表`numbers`中所有偶数的和。",
        "test_cases": [
            {"input": [1, 2, 3, 4, 5, 6], "expected_output": 12},
            {"input": [7, 9, 11], "expected_output": 0},
            {"input": [], "expected_output": 0},
            {"input": [2, -4, 6], "expected_output": 4},
        ],
    },
    {
        "input": "编写一个名为`solution`的Python函数，接收一个字符串`s`，返回其反转字符串。",
        "test_cases": [
            {"input": "hello", "expected_output": "olleh"},
            {"input": "Python", "expected_output": "nohtyP"},
            {"input": "", "expected_output": ""},
            {"input": "a", "expected_output": "a"},
        ],
    },
]


def mock_llm_code_generator(question: str) -> str:
    if "平方" in question:
        return "def solution(n):\n    return n * n"
    if "偶数" in question and "和" in question:
        return (
            "def solution(numbers):\n    total = 0\n    for num in numbers:\n"
            "        if num % 2 == 0:\n            total += num\n    return total"
        )
    if "反转字符串" in question:
        return "def solution(s):\n    return s[::-1]"
    return "def solution(x):\n    return 'Hello from default solution!'"


def code_generation_runnable(example_inputs: dict[str, Any]) -> dict[str, Any]:
    return {"text": mock_llm_code_generator(example_inputs["question"])}


@pytest.mark.slow
def test_seed_003_run_on_dataset() -> None:
    client = assay.Client(database_url="sqlite://")
    dataset = client.create_dataset(dataset_name="Python Code Generation Test Cases", description="seed 003")
    for example in SEED_EXAMPLES:
        client.create_example(
            dataset_id=dataset.id,
            inputs={"question": example["input"], "test_cases": example["test_cases"]},
            outputs={"expected_test_cases": example["test_cases"]},
        )
    evaluator = CodeCorrectnessEvaluator(
        name="PythonCodeCorrectness", execution_timeout=5, func_name="solution"
    )
    results = client.run_on_dataset(
        dataset_name="Python Code Generation Test Cases",
        llm_or_chain_factory=code_generation_runnable,
        evaluators=[evaluator],
        project_name="Code Correctness Evaluation Demo - Run",
        concurrency_level=3,
    )
    rows = list(results)
    assert len(rows) == 3
    for row in rows:
        (result,) = row["evaluation_results"]["results"]
        assert result.key == "PythonCodeCorrectness"
        assert result.score == 1.0
        assert result.metadata["sandbox"]["backend"] == "bubblewrap"
        assert all(d["passed"] for d in result.metadata["test_cases_details"])
    stored = client.read_experiment("Code Correctness Evaluation Demo - Run")
    (first,) = list(stored)[0]["evaluation_results"]["results"]
    assert first.metadata["test_cases_details"][0]["actual_output"] is not None


@pytest.mark.slow
def test_wrong_code_end_to_end_through_the_string_name() -> None:
    results = assay.evaluate(
        lambda inputs: {"text": "def solution(n):\n    return n + n\n"},
        data=[{"inputs": {"test_cases": SEED_EXAMPLES[0]["test_cases"]}}],
        evaluators=["code_correctness"],
        client=assay.Client(database_url="sqlite://"),
        progress=False,
    )
    (row,) = list(results)
    (result,) = row["evaluation_results"]["results"]
    assert result.score == pytest.approx(2 / 3)
    assert result.metadata["test_cases_details"][2]["actual_output"] == -6
