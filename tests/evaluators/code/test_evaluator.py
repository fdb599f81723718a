"""CodeCorrectnessEvaluator in test-case mode: the seed 003 example and every failure mode."""

from __future__ import annotations

from typing import Any

import pytest

from assay.evaluation import EvaluationResult
from assay.evaluators import CodeCorrectnessEvaluator
from assay.sandbox import SandboxConfig
from assay.schemas import Example, Run

SQUARE = [
    {"input": 2, "expected_output": 4},
    {"input": 0, "expected_output": 0},
    {"input": -3, "expected_output": 9},
]
EVENS = [
    {"input": [1, 2, 3, 4, 5, 6], "expected_output": 12},
    {"input": [7, 9, 11], "expected_output": 0},
    {"input": [], "expected_output": 0},
    {"input": [2, -4, 6], "expected_output": 4},
]
REVERSE = [
    {"input": "hello", "expected_output": "olleh"},
    {"input": "Python", "expected_output": "nohtyP"},
    {"input": "", "expected_output": ""},
    {"input": "a", "expected_output": "a"},
]

SEED_CORRECT = {
    "square": "def solution(n):\n    return n * n",
    "evens": "def solution(numbers):\n    total = 0\n    for num in numbers:\n"
    "        if num % 2 == 0:\n            total += num\n    return total",
    "reverse": "def solution(s):\n    return s[::-1]",
}


@pytest.fixture(scope="module")
def evaluator() -> CodeCorrectnessEvaluator:
    return CodeCorrectnessEvaluator(name="PythonCodeCorrectness", execution_timeout=5, func_name="solution")


def evaluate(
    evaluator: CodeCorrectnessEvaluator, code: Any, cases: Any = SQUARE, where: str = "inputs", **inputs: Any
) -> EvaluationResult:
    example = Example(
        inputs={"question": "q", **({"test_cases": cases} if where == "inputs" else {}), **inputs},
        outputs={"expected_test_cases": cases} if where == "outputs" else None,
    )
    result = evaluator.evaluate(Run(outputs=None if code is None else {"text": code}), example)
    assert isinstance(result, EvaluationResult)
    return result


@pytest.mark.parametrize("problem, cases", [("square", SQUARE), ("evens", EVENS), ("reverse", REVERSE)])
def test_seed_examples_score_one_with_details(
    evaluator: CodeCorrectnessEvaluator, problem: str, cases: Any
) -> None:
    result = evaluate(evaluator, SEED_CORRECT[problem], cases)
    assert result.key == "PythonCodeCorrectness"
    assert result.score == 1.0
    assert result.feedback == "All test cases passed successfully."
    details = result.metadata["test_cases_details"]
    assert [d["actual_output"] for d in details] == [c["expected_output"] for c in cases]
    assert all(d["execution_success"] and d["passed"] for d in details)
    assert set(details[0]) >= {
        "test_case_index",
        "input",
        "expected_output",
        "actual_output",
        "execution_success",
        "error_message",
        "traceback",
        "duration_ms",
    }
    assert result.metadata["overall_execution_success"] is True
    assert result.metadata["sandbox"]["backend"] == "bubblewrap"
    assert result.metadata["sandbox"]["limits"]["wall_seconds"] == 5


def test_wrong_code_scores_partially_or_zero(evaluator: CodeCorrectnessEvaluator) -> None:
    partial = evaluate(evaluator, "def solution(n):\n    return n + n\n")
    assert partial.score == pytest.approx(2 / 3)
    assert "Passed 2/3" in (partial.feedback or "")
    assert "Expected Output: 9, Actual Output: -6. Output mismatch." in (partial.comment or "")
    zero = evaluate(evaluator, "def solution(s):\n    return s\n", REVERSE)
    assert zero.score == 0.5  # "" and "a" are their own reverses
    none = evaluate(evaluator, "def solution(n):\n    return str(n * n)\n")
    assert none.score == 0.0, "'4' is not 4: comparison is type-strict"


def test_runtime_errors_are_reported_per_case(evaluator: CodeCorrectnessEvaluator) -> None:
    result = evaluate(evaluator, "def solution(n):\n    return 36 // n\n")
    details = result.metadata["test_cases_details"]
    assert [d["passed"] for d in details] == [False, False, False]
    assert details[1]["error_message"] == "ZeroDivisionError: integer division or modulo by zero"
    assert 'File "solution.py", line 2, in solution' in details[1]["traceback"]
    assert "harness" not in details[1]["traceback"]


def test_test_cases_may_come_from_outputs_and_take_several_arguments(
    evaluator: CodeCorrectnessEvaluator,
) -> None:
    cases = [
        {"args": [2, 3], "expected_output": 8},
        {"args": [2], "kwargs": {"power": 2}, "expected_output": 4},
    ]
    code = "def solution(base, power=3):\n    return base ** power\n"
    result = evaluate(evaluator, code, cases, where="outputs")
    assert result.score == 1.0
    assert result.metadata["test_cases_details"][1]["input"] == {"args": [2], "kwargs": {"power": 2}}


def test_float_tolerance(evaluator: CodeCorrectnessEvaluator) -> None:
    cases = [{"input": 3, "expected_output": 0.3}]
    assert evaluate(evaluator, "def solution(n):\n    return 0.1 * n\n", cases).score == 1.0


def test_markdown_fences_are_stripped(evaluator: CodeCorrectnessEvaluator) -> None:
    text = "Sure! Here it is:\n```python\ndef solution(n):\n    return n * n\n```\nEnjoy."
    assert evaluate(evaluator, text).score == 1.0


def test_output_key_and_func_name_are_configurable() -> None:
    evaluator = CodeCorrectnessEvaluator(output_key="code", func_name="square", execution_timeout=5)
    run = Run(outputs={"code": "def square(n):\n    return n * n\n"})
    result = evaluator.evaluate(run, Example(inputs={"test_cases": SQUARE}))
    assert isinstance(result, EvaluationResult) and result.score == 1.0
    assert result.key == "CodeCorrectnessEvaluator"


@pytest.mark.parametrize(
    "code, cases, feedback, message",
    [
        (None, SQUARE, "No code generated.", "LLM did not produce any output."),
        ("   ", SQUARE, "Invalid or empty code generated.", "not a valid code string or is empty"),
        ("def solution(n): return n", [], "Missing test cases.", "No test cases provided"),
        (
            "def solution(n): return n",
            [{"input": 1}],
            "Missing test cases.",
            "test case #0 has no 'expected_output'",
        ),
        ("def solution(n): return n", [{"expected_output": 1}], "Missing test cases.", "needs 'input'"),
        (
            "def answer(n):\n    return n",
            SQUARE,
            "The code does not define the expected function.",
            "the code defines no function named 'solution' (it defines: answer)",
        ),
        (
            "solution = 3",
            SQUARE,
            "The code does not define the expected function.",
            "'solution' is not a function (it is of type int)",
        ),
        (
            "def solution(n)\n    return n",
            SQUARE,
            "The code has a syntax error.",
            "SyntaxError: expected ':' (solution.py, line 1)",
        ),
        (
            "raise ValueError('at import')\n",
            SQUARE,
            "The code raised an exception when loaded.",
            "ValueError: at import",
        ),
    ],
)
def test_failure_modes_score_zero_with_a_clear_message(
    evaluator: CodeCorrectnessEvaluator, code: Any, cases: Any, feedback: str, message: str
) -> None:
    result = evaluate(evaluator, code, cases)
    assert result.error is None
    assert result.score == 0.0
    assert result.feedback == feedback
    assert message in (result.comment or "")
    assert result.metadata["overall_execution_success"] is False


@pytest.mark.slow
def test_timeout_scores_zero_and_keeps_finished_cases() -> None:
    evaluator = CodeCorrectnessEvaluator(execution_timeout=1.5)
    code = "def solution(n):\n    while n == 0:\n        pass\n    return n * n\n"
    result = evaluate(evaluator, code)
    statuses = [d["status"] for d in result.metadata["test_cases_details"]]
    assert statuses == ["ok", "timeout", "not_run"]
    assert result.score == pytest.approx(1 / 3)
    assert "timed out after 1.5 s" in (result.comment or "")
    assert result.metadata["timed_out"] is True


def test_unknown_language_in_the_example_scores_zero(evaluator: CodeCorrectnessEvaluator) -> None:
    result = evaluate(evaluator, "x", SQUARE, language="cobol")
    assert result.score == 0.0 and "unknown language 'cobol'" in (result.comment or "")


def test_unreachable_minimum_level_is_an_error_not_a_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    evaluator = CodeCorrectnessEvaluator(sandbox=SandboxConfig(backend="rlimit", min_level="bubblewrap"))
    result = evaluate(evaluator, SEED_CORRECT["square"])
    assert result.score is None
    assert "below the required minimum level (bubblewrap)" in (result.error or "")


def test_bad_configuration_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="execution_timeout"):
        CodeCorrectnessEvaluator(execution_timeout=0)
    with pytest.raises(ValueError, match="unknown language"):
        CodeCorrectnessEvaluator(language="cobol")


def test_code_is_found_in_bare_outputs_and_chat_messages(evaluator: CodeCorrectnessEvaluator) -> None:
    example = Example(inputs={"test_cases": SQUARE})
    code = "def solution(n):\n    return n * n\n"
    for outputs in (
        {"output": code},
        {"answer": code},
        {
            "messages": [
                {"role": "user", "content": "square"},
                {"role": "assistant", "content": f"```python\n{code}```"},
            ]
        },
        {"text": {"role": "assistant", "content": code}},
    ):
        result = evaluator.evaluate(Run(outputs=outputs), example)
        assert isinstance(result, EvaluationResult) and result.score == 1.0, outputs
    explicit = CodeCorrectnessEvaluator(output_key="code")
    missing = explicit.evaluate(Run(outputs={"output": code}), example)
    assert isinstance(missing, EvaluationResult) and missing.score == 0.0
    assert "LLM output 'code' is not a valid code string" in (missing.comment or "")
