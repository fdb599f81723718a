"""One test's verdict, in the kinds judges use, from what the parent saw of the run and
what the checker said. Every figure here is the parent's or the kernel's: nothing the
program prints about itself is read."""

from __future__ import annotations

from typing import Any

from assay.sandbox import CheckerRun, StdioTestRun

ACCEPTED = "accepted"
WRONG_ANSWER = "wrong_answer"
TIME_LIMIT = "time_limit"
MEMORY_LIMIT = "memory_limit"
OUTPUT_LIMIT = "output_limit"
RUNTIME_ERROR = "runtime_error"
COMPILE_ERROR = "compile_error"
CHECKER_FAILED = "checker_failed"
NOT_RUN = "not_run"
KINDS = (ACCEPTED, WRONG_ANSWER, TIME_LIMIT, MEMORY_LIMIT, OUTPUT_LIMIT, RUNTIME_ERROR, COMPILE_ERROR)
LABELS = {
    ACCEPTED: "accepted",
    WRONG_ANSWER: "wrong answer",
    TIME_LIMIT: "time limit exceeded",
    MEMORY_LIMIT: "memory limit exceeded",
    OUTPUT_LIMIT: "output limit exceeded",
    RUNTIME_ERROR: "runtime error",
    COMPILE_ERROR: "compile error",
    CHECKER_FAILED: "checker failed",
    NOT_RUN: "not run",
}
STDERR_SHOWN = 400
# the checker program's exit codes (testlib's): 0 accepted, 1 wrong answer, 2 presentation
# error (a wrong answer here); anything else (3 is testlib's "fail") is the checker's failure
CHECKER_VERDICTS = {0: ACCEPTED, 1: WRONG_ANSWER, 2: WRONG_ANSWER}


def run_verdict(run: StdioTestRun, time_limit: float, output_limit: int) -> tuple[str, str] | None:
    """The verdict the run alone decides (the output not yet judged), or None."""
    if run.timed_out == "wall":
        return (
            TIME_LIMIT,
            f"still running after {run.wall_ms / 1000:.1f} s of wall-clock time (asleep or blocked?)",
        )
    if run.timed_out == "cpu":
        spent = f"{run.cpu_ms:.0f} ms" if run.cpu_ms is not None else "its CPU limit"
        return TIME_LIMIT, f"used {spent} of CPU time; the limit is {time_limit * 1000:.0f} ms"
    if run.memory_exceeded:
        return MEMORY_LIMIT, "ran out of memory" + _stderr_tail(run)
    if run.output_exceeded:
        return OUTPUT_LIMIT, f"wrote more than {output_limit} bytes of output"
    if run.signal is not None:
        return RUNTIME_ERROR, f"killed by {run.signal}" + _stderr_tail(run)
    if run.exit_code != 0:
        return RUNTIME_ERROR, f"exit code {run.exit_code}" + _stderr_tail(run)
    return None


def python_syntax_error(run: StdioTestRun) -> str | None:
    """A Python program that did not parse fails every test the same way: a compile
    error (printing this itself, a program only fails)."""
    if run.exit_code != 1:
        return None
    lines = run.stderr.strip().splitlines()
    if lines and lines[-1].startswith(("SyntaxError", "IndentationError", "TabError")):
        return "\n".join(lines[-6:])
    return None


def checker_verdict(checked: CheckerRun) -> tuple[str, str]:
    said = (checked.stderr.strip() or checked.stdout.strip())[:STDERR_SHOWN]
    if checked.timed_out:
        return CHECKER_FAILED, "the checker program did not finish in time"
    if checked.signal is not None:
        return CHECKER_FAILED, f"the checker program was killed by {checked.signal}: {said}"
    kind = CHECKER_VERDICTS.get(checked.exit_code if checked.exit_code is not None else -1)
    if kind is None:
        return CHECKER_FAILED, f"the checker program exited with {checked.exit_code}: {said}"
    return kind, said


def test_record(index: int, kind: str, message: str, run: StdioTestRun | None) -> dict[str, Any]:
    record: dict[str, Any] = {"test": index, "verdict": kind}
    if message:
        record["message"] = message
    if run is not None:
        peak, peak_source = run.peak_memory_kb
        record.update(
            cpu_ms=None if run.cpu_ms is None else round(run.cpu_ms, 3),
            cpu_source=run.cpu_source,
            wall_ms=round(run.wall_ms, 3),
            peak_memory_kb=peak,
            memory_source=peak_source,
            exit_code=run.exit_code,
            signal=run.signal,
        )
    return record


def _stderr_tail(run: StdioTestRun) -> str:
    text = run.stderr.strip()
    return f": {text[-STDERR_SHOWN:]}" if text else ""
