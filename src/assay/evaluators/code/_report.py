"""Turning sandbox runs into EvaluationResults: score, feedback, comment, metadata."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from assay.evaluation import EvaluationResult
from assay.evaluators.code._cases import TestCase
from assay.evaluators.code._display import bounded, show
from assay.evaluators.code._timing import example_time, program_time
from assay.sandbox import CallOutcome, FunctionRun, ProgramRun
from assay.sandbox.equality import Tolerance, values_equal


def failure(key: str, message: str, feedback: str, **metadata: Any) -> EvaluationResult:
    """Score 0 with a clear message: missing code, missing tests, unknown language..."""
    return EvaluationResult(
        key=key,
        score=0.0,
        feedback=feedback,
        comment=message,
        metadata={
            "overall_execution_success": False,
            "test_cases_details": [],
            "raw_sandbox_stdout": None,
            "sandbox_error_message": message,
            **metadata,
        },
    )


def verdict_reducer(cases: Sequence[TestCase], tolerance: Tolerance) -> Callable[[CallOutcome], CallOutcome]:
    """Compare each outcome as it arrives and keep only what is shown and stored: the
    decoded values of many calls are never held at once. Anything about a value that
    cannot be compared or shown fails that case, with the reason."""

    def reduce(outcome: CallOutcome) -> CallOutcome:
        if not outcome.ok:
            return dataclasses.replace(outcome, passed=False)
        case = cases[outcome.index]
        try:
            passed = values_equal(case.expected, outcome.value, case.tolerance or tolerance)
            kept = bounded(outcome.value)
        except Exception as exc:  # noqa: BLE001 - the candidate's value, its failure
            return dataclasses.replace(
                outcome,
                status="error",
                value=None,
                passed=False,
                error_type="ValueRefused",
                message=f"the return value cannot be compared: {type(exc).__name__}",
            )
        return dataclasses.replace(outcome, value=kept, passed=passed)

    return reduce


def case_details(case: TestCase, outcome: CallOutcome, tolerance: Tolerance) -> dict[str, Any]:
    if outcome.passed is None:
        outcome = verdict_reducer([case] * (outcome.index + 1), tolerance)(outcome)
    return {
        "test_case_index": case.index,
        "input": bounded(case.shown_input),
        "expected_output": bounded(case.expected),
        "actual_output": outcome.value if outcome.ok else None,
        "execution_success": outcome.ok,
        "passed": bool(outcome.passed),
        "status": outcome.status,
        "error_message": None if outcome.ok else _error_text(outcome),
        "traceback": outcome.traceback,
        "duration_ms": None if outcome.duration_ms is None else round(outcome.duration_ms, 3),
        "cpu_ms": None if outcome.cpu_ms is None else round(outcome.cpu_ms, 3),
        "wall_ms": None if outcome.wall_ms is None else round(outcome.wall_ms, 3),
        "cpu_source": outcome.cpu_source,
    }


def _error_text(outcome: CallOutcome) -> str:
    if outcome.error_type and outcome.status == "error":
        return f"{outcome.error_type}: {outcome.message or ''}".rstrip(": ")
    return outcome.message or outcome.status


def _case_line(detail: dict[str, Any]) -> str:
    status = "Passed" if detail["passed"] else "Failed"
    line = (
        f"Test Case {detail['test_case_index'] + 1} (Input: {show(detail['input'])}): "
        f"Status: {status}. Expected Output: {show(detail['expected_output'])}, "
        f"Actual Output: {show(detail['actual_output'])}."
    )
    if not detail["execution_success"]:
        line += f" Error: {detail['error_message']}."
    elif not detail["passed"]:
        line += " Output mismatch."
    return line


def from_function_run(
    key: str, cases: list[TestCase], run: FunctionRun, tolerance: Tolerance, extra: dict[str, Any]
) -> EvaluationResult:
    base = {
        "raw_sandbox_stdout": run.output.stdout,
        "raw_sandbox_stderr": run.output.stderr,
        "output_truncated": run.output.truncated,
        "sandbox": run.sandbox,
        "duration_ms": round(run.duration_ms, 3),
        **extra,
    }
    if run.compile_ms is not None:
        base["compile_ms"] = round(run.compile_ms, 3)  # not part of duration's running time
    if run.load_failure is not None:
        load = run.load_failure
        message = _load_message(load.kind, load.error_type, load.message)
        comment = f"Overall Execution Error: {message}"
        if load.traceback:
            comment += f"\n{load.traceback.rstrip()}"
        return EvaluationResult(
            key=key,
            score=0.0,
            feedback=_load_feedback(load.kind, message),
            comment=comment,
            metadata={
                "overall_execution_success": False,
                "test_cases_details": [],
                "sandbox_error_message": message,
                "load_error": load.kind,
                **base,
            },
        )
    details = [case_details(c, o, tolerance) for c, o in zip(cases, run.outcomes)]
    passed = sum(d["passed"] for d in details)
    total = len(details)
    error = (
        "; ".join(sorted({d["error_message"] for d in details if d["status"] in ("timeout", "crashed")}))
    ) or None
    return EvaluationResult(
        key=key,
        score=passed / total,
        feedback=_cases_feedback(passed, total, run.timed_out),
        comment="\n".join(_case_line(d) for d in details),
        metadata={
            "overall_execution_success": passed == total,
            "test_cases_details": details,
            "passed": passed,
            "total": total,
            "timed_out": run.timed_out,
            "sandbox_error_message": error,
            "execution_time": example_time(run.outcomes),
            **base,
        },
    )


def _cases_feedback(passed: int, total: int, timed_out: bool) -> str:
    if passed == total:
        return "All test cases passed successfully."
    suffix = " The time limit was reached." if timed_out else ""
    if passed == 0:
        return "All test cases failed or produced incorrect output." + suffix
    return f"Passed {passed}/{total} test cases. Some tests failed or had incorrect output." + suffix


_LOAD_FEEDBACK = {
    "syntax": "The code has a syntax error.",
    "compile": "The code does not compile.",
    "missing_function": "The code does not define the expected function.",
    "exception": "The code raised an exception when loaded.",
    "timeout": "Code execution timed out.",
    "ended": "The code's process ended before it could be tested.",
    "declaration": "The code's declaration of the function is not one a test program can call.",
}


def _load_feedback(kind: str, message: str) -> str:
    return _LOAD_FEEDBACK.get(kind, f"Code execution failed: {message}")


def _load_message(kind: str, error_type: str | None, message: str) -> str:
    if kind in ("syntax", "exception") and error_type:
        return f"{error_type}: {message}"
    return message


def from_program_run(key: str, run: ProgramRun, extra: dict[str, Any]) -> EvaluationResult:
    verdict = run.verdict
    base = {
        "raw_sandbox_stdout": run.output.stdout,
        "raw_sandbox_stderr": run.output.stderr,
        "test_program_stdout": run.checker_output.stdout,
        "test_program_stderr": run.checker_output.stderr,
        "output_truncated": run.output.truncated,
        "sandbox": run.sandbox,
        "duration_ms": round(run.duration_ms, 3),
        "verdict": verdict,
        "test_cases_details": [],
        "timed_out": run.timed_out,
        "execution_time": program_time(verdict),
        **extra,
    }
    if run.passed:
        return EvaluationResult(
            key=key,
            score=1.0,
            feedback="All tests in the test program passed.",
            comment=f"check() completed: {verdict.get('calls', 0)} candidate call(s), every assertion held.",
            metadata={"overall_execution_success": True, "sandbox_error_message": None, **base},
        )
    comment = _program_comment(verdict)
    return EvaluationResult(
        key=key,
        score=0.0,
        feedback=_program_feedback(verdict),
        comment=comment,
        metadata={
            "overall_execution_success": False,
            "sandbox_error_message": comment,
            "failing_assertion": _assertion(verdict),
            **base,
        },
    )


def _program_feedback(verdict: dict[str, Any]) -> str:
    kind = verdict.get("kind")
    if verdict.get("stage") == "load":
        return _LOAD_FEEDBACK.get(str(kind), "The code could not be loaded.")
    return {
        "assertion": "A test assertion failed.",
        "timeout": "Code execution timed out.",
        "candidate_error": "The code raised an exception under test.",
        "candidate_ended": "The code's process ended under test.",
        "test_compile": "The test program does not compile.",
    }.get(str(kind), "The test program failed.")


def _program_comment(verdict: dict[str, Any]) -> str:
    kind, message = verdict.get("kind"), verdict.get("message") or ""
    if verdict.get("stage") == "load":
        text = _load_message(str(kind), verdict.get("error_type"), message)
        trace = verdict.get("traceback")
        return f"Overall Execution Error: {text}" + (f"\n{trace.rstrip()}" if trace else "")
    if kind == "assertion" and verdict.get("source"):
        text = f"Failing assertion (test line {verdict.get('line')}): {verdict['source']}"
        return text + (f"\nAssertionError: {message}" if message else "")
    where = f" at test line {verdict['line']}: {verdict.get('source')}" if verdict.get("line") else ""
    error_type = verdict.get("error_type")
    prefix = f"{error_type}: " if error_type and kind != "timeout" else ""
    return f"{prefix}{message}{where}".strip() or "the test program failed"


def _assertion(verdict: dict[str, Any]) -> dict[str, Any] | None:
    if verdict.get("kind") != "assertion":
        return None
    return {"line": verdict.get("line"), "source": verdict.get("source"), "message": verdict.get("message")}
