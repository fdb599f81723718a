"""Reading the sandbox's report lines (untrusted: shapes checked, numbers clamped) and
turning them into the four metrics.

The counts of a run come from the process the generated tests run in, so the tests can
write them: a report that is not the shape the harness writes scores 0 with the reason
(the tests' doing), never an excluded error."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.evaluators.unit_tests._mutants import Mutant
from assay.sandbox import ScriptRun, require_ready
from assay.schemas import EvaluationResult, EvaluationResults

SHOWN_FAILURES = 5


@dataclass
class Outcome:
    passes_reference: bool
    reason: str
    reference: dict[str, Any] = field(default_factory=dict)
    mutant_runs: dict[int, dict[str, Any]] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def no_tests(cls, reason: str) -> Outcome:
        return cls(False, reason)

    @classmethod
    def from_script(cls, done: ScriptRun, mark: str, mutants: int) -> Outcome:
        lines = [line for line in require_ready(done, mark, "the tests") if isinstance(line.get("exit"), int)]
        reference = next((line for line in lines if line.get("run") == "reference"), None)
        details = {"sandbox": done.sandbox, "job_timed_out": done.timed_out}
        if reference is None:
            reason = (
                f"the test run ended without a report (exit {done.exit_code}, "
                f"{'timed out' if done.timed_out else done.signal or 'no signal'}): "
                f"{done.output.stderr[-500:]}"
            )
            return cls(False, reason.strip(), details=details)
        malformed = _malformed(reference.get("result"))
        if malformed:
            return cls(False, f"the test run's report is malformed ({malformed})", details=details)
        runs: dict[int, dict[str, Any]] = {}
        for line in lines:
            index = line.get("index")
            if line.get("run") == "mutant" and isinstance(index, int) and 0 <= index < mutants:
                runs.setdefault(index, line)
        passes, reason = _verdict_on_reference(reference)
        return cls(passes, reason, reference, runs, details)

    def coverage(self) -> dict[str, Any]:
        result = self.reference.get("result")
        data = result.get("coverage") if isinstance(result, dict) else None
        totals = data.get("totals") if isinstance(data, dict) else None
        if not isinstance(totals, dict):
            return {"line": 0.0, "branch": 0.0, "measured": False}
        lines, statements = _count(totals, "covered_lines"), _count(totals, "num_statements")
        taken, branches = _count(totals, "covered_branches"), _count(totals, "num_branches")
        files = data.get("files") if isinstance(data, dict) else None
        only: dict[str, Any] = {}
        if isinstance(files, dict) and files and isinstance(next(iter(files.values())), dict):
            only = next(iter(files.values()))
        return {
            "line": _ratio(lines, statements),
            "branch": _ratio(taken, branches),
            "measured": True,
            "statements": statements,
            "branches": branches,
            "missing_lines": _ints(only.get("missing_lines"))[:100],
            "missing_branches": [b for b in _list(only.get("missing_branches")) if isinstance(b, list)][:100],
        }


def _malformed(result: Any) -> str | None:
    """Why the reference run's result is not the shape the harness writes, or None. (No
    result at all is judged by the run's exit: a timeout, no tests, a crash.)"""
    if result is None:
        return None
    if not isinstance(result, dict):
        return f"a {type(result).__name__}, not an object"
    for key in ("tests", "collection_errors"):
        if not isinstance(result.get(key, []), list):
            return f"{key!r} is not a list"
    if not all(isinstance(test, dict) for test in result.get("tests", [])):
        return "a test entry is not an object"
    for key in ("passed", "failed", "skipped"):
        value = result.get(key, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return f"{key!r} is not a count"
    coverage = result.get("coverage")
    if coverage is not None and not isinstance(coverage, dict):
        return "'coverage' is not an object"
    return None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _verdict_on_reference(run: dict[str, Any]) -> tuple[bool, str]:
    result = run.get("result") if isinstance(run.get("result"), dict) else {}
    assert isinstance(result, dict)
    if run.get("timed_out"):
        return False, "the tests timed out on the reference implementation"
    errors = [str(e) for e in _list(result.get("collection_errors"))]
    if errors:
        return False, f"the test file cannot be collected: {errors[0][-800:]}"
    failed = [t for t in _list(result.get("tests")) if isinstance(t, dict) and t.get("outcome") == "failed"]
    if failed:
        shown = "; ".join(f"{t.get('name')}: {str(t.get('message'))[-300:]}" for t in failed[:SHOWN_FAILURES])
        return False, f"{len(failed)} test(s) fail on the reference implementation: {shown}"
    if run.get("exit") == 5 or _count(result, "passed") == 0:
        return False, "no tests were found in the generated test file"
    if run.get("exit") != 0:
        return False, (
            f"the test run failed on the reference (exit {run.get('exit')}): {str(run.get('output'))[-800:]}"
        )
    return True, f"{_count(result, 'passed')} test(s) pass on the reference"


def _count(data: Any, key: str) -> int:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _ratio(part: int, whole: int) -> float:
    return 1.0 if whole == 0 else min(1.0, part / whole)


def _ints(value: Any) -> list[int]:
    return [v for v in value if isinstance(v, int)] if isinstance(value, list) else []


def results_of(
    name: str, outcome: Outcome, made: list[Mutant], wanted_mutants: bool = True
) -> EvaluationResults:
    """The four metrics (three when no mutants were asked for)."""
    mutant_rows = [_mutant_row(m, outcome.mutant_runs.get(m.index)) for m in made]
    killed = sum(row["status"] in ("killed", "timeout") for row in mutant_rows)
    scored = sum(row["status"] != "invalid" for row in mutant_rows)  # a mutant that does not parse
    coverage = outcome.coverage()
    reference_tests = _reference_summary(outcome.reference)
    worth = outcome.passes_reference
    common = {"passes_reference": worth, "reason": outcome.reason, **outcome.details}
    mutation = EvaluationResult(
        key=f"{name}_mutation_score",
        score=killed / scored if worth and scored else 0.0,
        comment=(f"killed {killed} of {scored} mutant(s)" if worth else outcome.reason),
        metadata={
            "passes_reference": worth,
            "mutants": mutant_rows if worth else [],
            "killed": killed if worth else 0,
            "total": scored,
            "invalid": len(made) - scored,
            "survived": [r for r in mutant_rows if r["status"] == "survived"][:20] if worth else [],
        },
    )
    if not made:  # the example's fault, not the tests': no number to give
        mutation = EvaluationResult(
            key=mutation.key,
            error="the reference implementation offers nothing to mutate (no operators or constants)",
        )
    return EvaluationResults(
        results=[
            EvaluationResult(
                key=f"{name}_pass",
                score=int(worth),
                comment=outcome.reason,
                metadata={
                    **common,
                    "tests": reference_tests,
                    "output": str(outcome.reference.get("output") or ""),
                },
            ),
            *([mutation] if wanted_mutants else []),
            EvaluationResult(
                key=f"{name}_line_coverage",
                score=coverage["line"] if worth else 0.0,
                comment=None if worth else outcome.reason,
                metadata={"passes_reference": worth, **coverage},
            ),
            EvaluationResult(
                key=f"{name}_branch_coverage",
                score=coverage["branch"] if worth else 0.0,
                comment=None if worth else outcome.reason,
                metadata={"passes_reference": worth, **coverage},
            ),
        ]
    )


def _mutant_row(mutant: Mutant, run: dict[str, Any] | None) -> dict[str, Any]:
    row: dict[str, Any] = dict(mutant.shown())
    if run is None:
        row["status"] = "not_run"  # no report: counted as not killed
    elif run.get("invalid") is True:
        row["status"] = "invalid"  # does not parse (a token mutant): not in the score
    elif run.get("timed_out"):  # twice; "undecided" when the reference was slow too: no kill
        row["status"] = "undecided" if run.get("undecided") else "timeout"
    else:
        row["status"] = "killed" if run.get("exit") != 0 else "survived"
    if run is not None and isinstance(run.get("seconds"), (int, float)):
        row["seconds"] = round(float(run["seconds"]), 3)
    return row


def _reference_summary(run: dict[str, Any]) -> dict[str, Any]:
    result = run.get("result") if isinstance(run.get("result"), dict) else {}
    assert isinstance(result, dict)
    return {
        "passed": _count(result, "passed"),
        "failed": _count(result, "failed"),
        "skipped": _count(result, "skipped"),
        "failures": [
            t for t in _list(result.get("tests")) if isinstance(t, dict) and t.get("outcome") == "failed"
        ][:SHOWN_FAILURES],
    }
