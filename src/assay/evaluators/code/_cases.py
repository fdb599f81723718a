"""Reading what CodeCorrectnessEvaluator needs from a run and an example."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.errors import CaseError
from assay.sandbox import Call, Language
from assay.sandbox.equality import Tolerance
from assay.sandbox.harness import codec
from assay.sandbox.languages import strip_fences
from assay.schemas import Example, Run


@dataclass(frozen=True)
class TestCase:
    index: int
    call: Call
    expected: Any
    shown_input: Any  # what the details show as "input": a case's single ``input``, or its args
    tolerance: Tolerance | None = None  # the case's own rel_tol/abs_tol/zero_tol


@dataclass(frozen=True)
class TestProgram:
    prompt: str
    test: str
    entry_point: str


DEFAULT_OUTPUT_KEYS = ("text", "output")


def code_from_run(run: Run, output_key: str | None, language: Language) -> str:
    """The code, or raise CaseError saying what is missing.

    With no ``output_key``: ``"text"``, else ``"output"`` (what a target
    returning a bare string produces), else the only value. A chat message (or a list of
    them, the last one) gives its content.
    """
    outputs = run.outputs
    if not outputs:
        raise CaseError("LLM did not produce any output.", "No code generated.")
    key = output_key or next(
        (k for k in DEFAULT_OUTPUT_KEYS if k in outputs), next(iter(outputs)) if len(outputs) == 1 else "text"
    )
    text = _content(outputs.get(key))
    if not isinstance(text, str) or not text.strip():
        raise CaseError(
            f"LLM output {key!r} is not a valid code string or is empty.", "Invalid or empty code generated."
        )
    return strip_fences(text, language)


def _content(value: Any) -> Any:
    if isinstance(value, list) and value:
        value = value[-1]
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    return value


def inputs_of(example: Example | None) -> dict[str, Any]:
    return dict(example.inputs) if example is not None and example.inputs else {}


def test_program_of(example: Example | None) -> TestProgram | None:
    """HumanEval/MBPP style: inputs carry ``test`` and ``entry_point`` (and ``prompt``)."""
    inputs = inputs_of(example)
    if "test" not in inputs or "entry_point" not in inputs:
        return None
    test, entry_point = inputs["test"], inputs["entry_point"]
    if not isinstance(test, str) or not isinstance(entry_point, str) or not entry_point:
        raise CaseError("example.inputs 'test' and 'entry_point' must be non-empty strings")
    prompt = inputs.get("prompt") or ""
    if not isinstance(prompt, str):
        raise CaseError("example.inputs 'prompt' must be a string")
    return TestProgram(prompt, test, entry_point)


TOLERANCE_KEYS = ("rel_tol", "abs_tol", "zero_tol")
DEFAULT_TOLERANCE = Tolerance()


def test_cases_of(example: Example | None, default: Tolerance = DEFAULT_TOLERANCE) -> list[TestCase]:
    raw: Any = None
    if example is not None and example.inputs and "test_cases" in example.inputs:
        raw = example.inputs["test_cases"]
    elif example is not None and example.outputs and "expected_test_cases" in example.outputs:
        raw = example.outputs["expected_test_cases"]
    if not raw:
        raise CaseError(
            "No test cases provided in the example for evaluation. Please ensure "
            "'test_cases' is in example.inputs or 'expected_test_cases' in example.outputs."
        )
    if not isinstance(raw, (list, tuple)):
        raise CaseError(f"test cases must be a list, got {type(raw).__name__}")
    return [_parse_case(index, case, default) for index, case in enumerate(raw)]


GENERATED_KEY = "generated_test_cases"


def generated_cases_of(example: Example | None, default: Tolerance, start: int = 0) -> list[TestCase]:
    """The cases ``generate_test_cases`` stored in ``example.inputs["generated_test_cases"]``,
    numbered after the given ones; none stored is no case, not an error."""
    raw = (example.inputs or {}).get(GENERATED_KEY) if example is not None else None
    if raw is None:
        return []
    if not isinstance(raw, (list, tuple)):
        raise CaseError(f"example.inputs[{GENERATED_KEY!r}] must be a list, got {type(raw).__name__}")
    return [_parse_case(start + index, case, default) for index, case in enumerate(raw)]


def _case_tolerance(where: str, case: dict[str, Any], default: Tolerance) -> Tolerance | None:
    given = {key: case[key] for key in TOLERANCE_KEYS if key in case}
    if not given:
        return None
    try:
        return Tolerance(**{**{k: getattr(default, k) for k in TOLERANCE_KEYS}, **given})
    except (TypeError, ValueError) as exc:
        raise CaseError(f"{where}: {exc}") from None


def _parse_case(index: int, case: Any, default: Tolerance) -> TestCase:
    where = f"test case #{index}"
    if not isinstance(case, dict):
        raise CaseError(f"{where} must be a dict, got {type(case).__name__}")
    if "expected_output" not in case:
        raise CaseError(f"{where} has no 'expected_output'")
    if "args" in case or "kwargs" in case:
        args, kwargs = case.get("args", []), case.get("kwargs", {})
        if not isinstance(args, (list, tuple)) or not isinstance(kwargs, dict):
            raise CaseError(f"{where}: 'args' must be a list and 'kwargs' a dict")
        if not all(isinstance(key, str) for key in kwargs):
            raise CaseError(f"{where}: 'kwargs' keys must be strings")
        call, shown = Call(tuple(args), dict(kwargs)), {"args": list(args), "kwargs": kwargs}
    elif "input" in case:
        call, shown = Call((case["input"],)), case["input"]
    else:
        raise CaseError(f"{where} needs 'input' (one argument) or 'args'/'kwargs'")
    try:
        codec.encode([list(call.args), call.kwargs])
    except codec.UnsupportedValue as exc:
        raise CaseError(f"{where}: its input is not plain data ({exc})") from None
    return TestCase(index, call, case["expected_output"], shown, _case_tolerance(where, case, default))
