"""From the sandbox's one report line to the verdict: resolved when every FAIL_TO_PASS
test and every PASS_TO_PASS test passed. A test with no outcome (never run, the run ended
early, a collection error) did not pass. The line comes from our program in the sandbox,
but its fields are checked as untrusted all the same."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from assay.errors import SandboxSetupError
from assay.evaluators.patches._instance import Instance
from assay.sandbox import ScriptRun, require_ready

MARK = "\x1eassay-patches "
SHOWN = 5
OUTCOMES = {"passed", "failed", "error", "skipped", "xfailed", "xpassed"}


@dataclass
class Verdict:
    resolved: bool
    reason: str
    tests: dict[str, str] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


def verdict_of(done: ScriptRun, instance: Instance) -> Verdict:
    lines = require_ready(done, MARK, "the repository's tests")
    if len(lines) != 1:
        reason = (
            "the test run ended without a report"
            if not lines
            else f"{len(lines)} report lines where the harness writes one (a forged report)"
        )
        return Verdict(
            False, f"{reason} (exit {done.exit_code}, {'timed out' if done.timed_out else 'in time'})"
        )
    line = lines[0]
    if "test_patch_error" in line:
        raise SandboxSetupError(
            f"the instance's test patch does not apply: {str(line['test_patch_error'])[-800:]}"
        )
    if line.get("applied") is not True:
        return Verdict(
            False, f"the patch does not apply: {str(line.get('message'))[-1500:]}", details=_details(line)
        )
    tests = _tests(line.get("tests"), instance)
    return _judged(tests, instance, line)


def _tests(reported: Any, instance: Instance) -> dict[str, str]:
    reported = reported if isinstance(reported, dict) else {}
    outcomes = {}
    for test in instance.tests:
        outcome = reported.get(test)
        outcomes[test] = outcome if outcome in OUTCOMES else "missing"
    return outcomes


def _judged(tests: dict[str, str], instance: Instance, line: dict[str, Any]) -> Verdict:
    details = _details(line)
    details["fail_to_pass"] = _counts(tests, instance.fail_to_pass)
    details["pass_to_pass"] = _counts(tests, instance.pass_to_pass)
    failing = [t for t in instance.tests if tests[t] != "passed"]
    if not failing:
        return Verdict(True, f"resolved: {len(tests)} test(s) pass", tests, details)
    shown = ", ".join(f"{t} ({tests[t]})" for t in failing[:SHOWN])
    more = f" and {len(failing) - SHOWN} more" if len(failing) > SHOWN else ""
    why = ""
    if line.get("timed_out"):
        why = "; the tests timed out"
    elif line.get("finished") is None:
        why = f"; the test run ended before the test runner finished (exit {line.get('exit')})"
    return Verdict(False, f"not resolved: {shown}{more} did not pass{why}", tests, details)


def _counts(tests: dict[str, str], names: tuple[str, ...]) -> dict[str, int]:
    return {"passed": sum(tests[t] == "passed" for t in names), "total": len(names)}


def _details(line: dict[str, Any]) -> dict[str, Any]:
    keep: dict[str, Any] = {}
    for key in ("exit", "timed_out", "finished"):
        value = line.get(key)
        if value is None or isinstance(value, (int, bool)):
            keep[key] = value
    seconds = line.get("seconds")
    keep["test_seconds"] = round(float(seconds), 3) if isinstance(seconds, (int, float)) else None
    phases = line.get("phases")
    keep["phases"] = (
        {k: v for k, v in phases.items() if isinstance(v, (int, float))} if isinstance(phases, dict) else {}
    )
    keep["apply_message"] = str(line.get("message") or "")[-1500:]
    keep["output"] = str(line.get("output") or "")[-4000:]
    removed = line.get("removed")
    keep["removed"] = [str(r) for r in removed[:50]] if isinstance(removed, list) else []
    errors = line.get("collection_errors")
    keep["collection_errors"] = errors[:5] if isinstance(errors, list) else []
    return keep
