"""ToolCodeEvaluator: the code an agent's Python tool ran, re-run in the sandbox."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.evaluators import ToolCodeEvaluator
from assay.schemas import EvaluationResult, Example, Run
from assay.tracing import trace_into, traceable


def python_repl_run(snippets: list[tuple[str, str]]) -> Run:
    """A run whose @traceable python tool executed each snippet, recording the output."""

    outputs = iter([recorded for _, recorded in snippets])

    @traceable(run_type="tool", name="python")
    def python(code: str) -> str:
        return next(outputs)

    root = Run(name="agent")
    with trace_into(root):
        for code, _ in snippets:
            python(code=code)
    return root


def evaluate(run: Run, **kwargs: Any) -> EvaluationResult:
    result = ToolCodeEvaluator(**kwargs).evaluate(run, Example())
    assert isinstance(result, EvaluationResult), result
    return result


@pytest.mark.slow
def test_code_that_reproduces_its_recorded_output_passes_with_repl_state() -> None:
    run = python_repl_run(
        [
            ("x = 21\nprint('set')", "set\n"),
            ("print(x * 2)", "42"),
            ("import math\nprint(math.sqrt(x + 4))", "5.0"),
        ]
    )
    result = evaluate(run)
    assert result.score == 1.0, result.comment
    rows = result.metadata["calls"]
    assert [row["stdout"].strip() for row in rows] == ["set", "42", "5.0"]
    assert rows[0]["sandbox"]["backend"] == "bubblewrap"
    stateless = evaluate(run, stateful=False)  # x is unknown without the earlier call
    assert stateless.score == pytest.approx(1 / 3)
    assert all("NameError: name 'x'" in row["reason"] for row in stateless.metadata["calls"][1:])


@pytest.mark.slow
def test_wrong_output_errors_and_hangs_fail() -> None:
    run = python_repl_run(
        [("print(1 + 1)", "3"), ("raise ValueError('boom')", ""), ("while True:\n    pass", "")]
    )
    result = evaluate(run, timeout=1.0)
    assert result.score == 0.0
    reasons = [row["reason"] for row in result.metadata["calls"]]
    assert "printed '2', the trace recorded '3'" in reasons[0]
    assert "ValueError: boom" in reasons[1] and reasons[2] == "timed out"
    assert evaluate(python_repl_run([("print(1 + 1)", "3")]), compare_output=False).score == 1.0


@pytest.mark.slow
def test_openai_tool_calls_with_tool_messages() -> None:
    messages = [
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {
                        "name": "run_python",
                        "arguments": json.dumps({"code": "print(sum(range(5)))"}),
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "10"},
    ]
    result = evaluate(Run(outputs={"messages": messages}))
    assert result.score == 1.0 and result.metadata["calls"][0]["recorded_output"] == "10"


@pytest.mark.slow
def test_hostile_tool_code_is_contained(tmp_path: Path) -> None:
    canary = tmp_path / "canary.txt"
    canary.write_text("safe")
    code = (
        f"import os\ntry:\n    open({str(canary)!r}, 'w').write('owned')\n"
        "except OSError as e:\n    print('denied')\n"
    )
    result = evaluate(python_repl_run([(code, "denied")]))
    assert canary.read_text() == "safe"
    assert result.score == 1.0  # the sandbox has no such file to write


def test_a_run_without_code_tool_calls_is_an_error_saying_so() -> None:
    result = ToolCodeEvaluator().evaluate(Run(outputs={"messages": []}), Example())
    assert isinstance(result, EvaluationResult)
    assert result.error is not None and "no tool call with code" in result.error


@pytest.mark.slow
def test_through_evaluate() -> None:
    @traceable(run_type="tool", name="python")
    def python(code: str) -> str:
        return "4" if "2 + 2" in code else "5"

    def agent(inputs: dict[str, Any]) -> dict[str, Any]:
        python(code=inputs["code"])
        return {"answer": "done"}

    results = assay.evaluate(
        agent,
        data=[{"inputs": {"code": "print(2 + 2)"}}, {"inputs": {"code": "print(2 * 3)"}}],
        evaluators=[ToolCodeEvaluator()],
        client=assay.Client(database_url="sqlite://"),
        progress=False,
    )
    assert [row["evaluation_results"]["results"][0].score for row in results] == [1.0, 0.0]
