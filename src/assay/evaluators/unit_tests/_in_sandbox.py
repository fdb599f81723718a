"""The program that runs inside the sandbox (never imported by assay itself).

It is sent as the sandbox script with ``PAYLOAD`` defined before it. It runs the
generated tests once on the reference (under coverage.py) and then once per mutant, each
run in a fresh forked process in its own folder, stopped at its time limit, with its
output going to a file of its own. It prints one report line per run; the trusted parent
decides everything from those lines and counts a run whose line is missing as one the
tests did not fail.

A run's counts reach this program over a pipe it opened before the fork and reads while
the run lasts, never through a file in the run's folder (which the tests, or a process
they leave behind, could rewrite after the fact); what arrives after the run's exit is not
read, and more than ``MAX_RESULT_BYTES`` is dropped. The tests run in the process that
writes the pipe, so what arrives is still untrusted: the parent checks every field's
shape and scores a malformed report 0.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from typing import Any

PAYLOAD: dict[str, Any] = globals().get("PAYLOAD", {})
MARK = "\x1eassay-unit-tests "
OUTPUT_TAIL = 4000
MAX_RESULT_BYTES = 4 << 20
MAX_RESULT_DEPTH = 12  # the harness writes 6 levels (coverage's missing branches)


def main() -> None:
    try:  # before any candidate code runs: a failure here is the sandbox's, not the tests'
        sys.path.insert(0, PAYLOAD["site"])
        if PAYLOAD["framework"] == "pytest":
            import pytest  # noqa: F401  (once here, so each fork starts with it loaded)
        if PAYLOAD["framework"] == "node:test" and not os.access(PAYLOAD["node"] or "", os.X_OK):
            raise FileNotFoundError(f"node is not runnable here: {PAYLOAD['node']!r}")
        if PAYLOAD["coverage"] and PAYLOAD["framework"] != "node:test":
            import coverage  # noqa: F401
    except BaseException as exc:
        report({"setup_error": f"{type(exc).__name__}: {exc}"})
        return
    report({"ready": True})
    # before any test runs (a process a test leaves behind could rewrite a file checked later)
    invalid = {index for index, source in enumerate(PAYLOAD["mutants"]) if not parses(f"m{index}", source)}
    started = time.monotonic()
    reference = run_child("reference", PAYLOAD["reference"], True, PAYLOAD["reference_timeout"])
    report({"run": "reference", **reference})
    if not passed(reference):
        return
    took = time.monotonic() - started
    timeout = PAYLOAD["mutant_timeout"] or min(PAYLOAD["max_mutant_timeout"], max(2.0, 5 * took))
    for index, source in enumerate(PAYLOAD["mutants"]):
        if index in invalid:  # a token mutant may not parse: not a kill, left out
            report({"run": "mutant", "index": index, "exit": -1, "invalid": True})
            continue
        run = run_child(f"m{index}", source, False, timeout)
        if run["timed_out"]:
            run = settle_timeout(index, source, timeout)
        report({"run": "mutant", "index": index, **run})


def settle_timeout(index: int, source: str, timeout: float) -> dict[str, Any]:
    """A timeout is a kill only if it is the mutant's doing: the mutant is run once more,
    and when it times out again the reference runs the same suite under the same limit;
    unless it finishes well within it (half), the machine was too slow to tell
    (``undecided``, not a kill)."""
    again = run_child(f"m{index}-again", source, False, timeout)
    if not again["timed_out"]:
        return {**again, "rerun": True}
    reference = run_child(f"m{index}-reference", PAYLOAD["reference"], False, timeout)
    well_within = passed(reference) and reference["seconds"] <= timeout / 2
    return {**again, "rerun": True, "reference_seconds": reference["seconds"], "undecided": not well_within}


def parses(folder: str, source: str) -> bool:
    """Python mutants were checked by the parent; a JavaScript one is checked by node."""
    if PAYLOAD["framework"] != "node:test":
        return True
    import subprocess

    path = folder + "-check.js"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(source)
    checked = subprocess.run([PAYLOAD["node"], "--check", path], capture_output=True, timeout=30)
    os.remove(path)
    return checked.returncode == 0


def passed(run: dict[str, Any]) -> bool:
    result = run.get("result") or {}
    return run["exit"] == 0 and not run["timed_out"] and result.get("passed", 0) > 0


def report(line: dict[str, Any]) -> None:
    sys.stdout.write(MARK + json.dumps(line) + "\n")
    sys.stdout.flush()


def run_child(folder: str, source: str, measure: bool, timeout: float) -> dict[str, Any]:
    os.mkdir(folder)
    for name, text in ((PAYLOAD["module_file"], source), (PAYLOAD["test_file"], PAYLOAD["tests"])):
        with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
            handle.write(text)
    began = time.monotonic()
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reader)
        os.setpgid(0, 0)
        os.chdir(folder)
        log = os.open("output.txt", os.O_WRONLY | os.O_CREAT, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        code = 3
        try:
            code = run_tests(measure, stop_early=not measure, channel=writer)
        finally:
            os._exit(code)
    os.close(writer)
    received = bytearray()
    try:
        exit_code, timed_out = wait(pid, began + timeout, reader, received)
    finally:
        os.close(reader)
    return {
        "exit": exit_code,
        "timed_out": timed_out,
        "seconds": time.monotonic() - began,
        "result": parse_result(received),
        "output": tail(os.path.join(folder, "output.txt")) if measure else "",
    }


def wait(pid: int, deadline: float, reader: int, received: bytearray) -> tuple[int, bool]:
    os.set_blocking(reader, False)
    while True:
        drain(reader, received)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            drain(reader, received)  # what the run wrote before it exited, not after
            return os.waitstatus_to_exitcode(status), False
        if time.monotonic() >= deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(pid, 0)
            return -9, True
        time.sleep(0.005)


def drain(reader: int, received: bytearray) -> None:
    while True:
        try:
            chunk = os.read(reader, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            return
        if len(received) <= MAX_RESULT_BYTES:
            received += chunk


def parse_result(received: bytearray) -> Any:
    """One JSON value, or None (nothing, too much, not JSON, or nested deeper than the
    harness writes: the parent's 0)."""
    if not received or len(received) > MAX_RESULT_BYTES:
        return None
    try:
        value = json.loads(bytes(received))
    except (ValueError, RecursionError):
        return None
    return value if depth(value) <= MAX_RESULT_DEPTH else None


def depth(value: Any) -> int:
    """How deeply lists and objects nest in ``value`` (iteratively: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                deepest = max(deepest, level + 1)
                stack.append((child, level + 1))
    return deepest


def run_tests(measure: bool, stop_early: bool, channel: int) -> int:
    sys.path.insert(0, os.getcwd())
    tracer = None
    if measure and PAYLOAD["coverage"] and PAYLOAD["framework"] != "node:test":
        import coverage

        target = os.path.abspath(PAYLOAD["module"] + ".py")
        tracer = coverage.Coverage(data_file=None, branch=True, include=[target], config_file=False)
        tracer.start()
    if PAYLOAD["framework"] == "node:test":
        code, result = run_node(measure)
    elif PAYLOAD["framework"] == "pytest":
        code, result = run_pytest(stop_early)
    else:
        code, result = run_unittest(stop_early)
    if tracer is not None:
        tracer.stop()
        try:
            tracer.json_report(outfile="coverage.json")
            result["coverage"] = brief_coverage(read_json("coverage.json"))
        except Exception as exc:  # e.g. the module was never imported
            result["coverage_error"] = f"{type(exc).__name__}: {exc}"
    data = memoryview(json.dumps(result).encode())
    while data:
        data = data[os.write(channel, data) :]
    return code


def brief_coverage(data: Any) -> Any:
    """Totals and what was missed: the per-function and per-class parts are dropped."""
    if not isinstance(data, dict):
        return None
    files = {
        name: {key: entry.get(key) for key in ("missing_lines", "missing_branches")}
        for name, entry in (data.get("files") or {}).items()
    }
    return {"totals": data.get("totals"), "files": files}


class Collector:
    def __init__(self) -> None:
        self.tests: list[dict[str, Any]] = []
        self.errors: list[str] = []

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when == "call" or report.outcome != "passed":
            self.tests.append(
                {
                    "name": report.nodeid,
                    "outcome": report.outcome,
                    "when": report.when,
                    "message": report.longreprtext[-1500:] if report.failed else "",
                }
            )

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.errors.append(report.longreprtext[-1500:])


def run_pytest(stop_early: bool) -> tuple[int, dict[str, Any]]:
    import pytest

    collector = Collector()
    args = ["-q", "-p", "no:cacheprovider", "--rootdir", os.getcwd(), PAYLOAD["test_file"]]
    code = int(pytest.main(args + (["-x"] if stop_early else []), plugins=[collector]))
    counts = {k: sum(t["outcome"] == k for t in collector.tests) for k in ("passed", "failed", "skipped")}
    return code, {**counts, "tests": collector.tests[:200], "collection_errors": collector.errors}


def run_unittest(stop_early: bool) -> tuple[int, dict[str, Any]]:
    import unittest

    module = PAYLOAD["test_file"][:-3]
    try:
        suite = unittest.defaultTestLoader.loadTestsFromName(module)
    except Exception as exc:
        return 2, {
            "passed": 0,
            "failed": 0,
            "skipped": 0,
            "tests": [],
            "collection_errors": [f"{type(exc).__name__}: {exc}"],
        }
    result = unittest.TextTestRunner(stream=sys.stderr, verbosity=0, failfast=stop_early).run(suite)
    failed = [
        {"name": test.id(), "outcome": "failed", "when": "call", "message": text[-1500:]}
        for test, text in [*result.failures, *result.errors]
    ]
    counts = {
        "passed": result.testsRun - len(failed) - len(result.skipped),
        "failed": len(failed),
        "skipped": len(result.skipped),
    }
    code = 5 if result.testsRun == 0 else (0 if result.wasSuccessful() else 1)
    return code, {**counts, "tests": failed[:200], "collection_errors": []}


# -- node:test: node's own runner, its TAP report on one pipe and its lcov on another ---
TAP_COUNT = re.compile(r"# (tests|pass|fail|skipped|todo|cancelled) (\d+)")
TAP_FAILED = re.compile(r"not ok \d+ - (.*)")


def run_node(measure: bool) -> tuple[int, dict[str, Any]]:
    """The suite under ``node --test``. Its counts are read from the runner's TAP summary
    (lines at the left margin: what a test prints comes indented or escaped), coverage
    from its lcov report; both reach us on pipes, not through files the tests could
    rewrite. The runner runs each test file in a process of its own."""
    import subprocess

    argv = [PAYLOAD["node"], "--test", "--test-reporter=tap", "--test-reporter-destination=stdout"]
    if measure and PAYLOAD["coverage"]:
        argv += ["--experimental-test-coverage", "--test-reporter=lcov", "--test-reporter-destination=stderr"]
    done = subprocess.run([*argv, PAYLOAD["test_file"]], capture_output=True, stdin=subprocess.DEVNULL)
    tap = done.stdout.decode("utf-8", "replace")
    sys.stdout.write(tap[-OUTPUT_TAIL:])  # the run's output, as pytest's
    counts = {key: int(value) for key, value in TAP_COUNT.findall("\n".join(tap_summary(tap)))}
    failed = [
        {"name": m.group(1), "outcome": "failed", "when": "call", "message": ""}
        for line in tap.splitlines()
        if (m := TAP_FAILED.fullmatch(line))
    ]
    result: dict[str, Any] = {
        "passed": counts.get("pass", 0),
        "failed": counts.get("fail", 0) + counts.get("cancelled", 0),
        "skipped": counts.get("skipped", 0) + counts.get("todo", 0),
        "tests": failed[:200],
        "collection_errors": [],
    }
    if measure and PAYLOAD["coverage"]:
        result["coverage"] = lcov_coverage(done.stderr.decode("utf-8", "replace"), PAYLOAD["module_file"])
    code = done.returncode if counts.get("tests", 0) else 5
    return code, result


def tap_summary(tap: str) -> list[str]:
    """The runner's own summary: the last ``# tests N`` line at the margin and after."""
    lines = tap.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("# tests ")]
    return lines[starts[-1] :] if starts else []


def lcov_coverage(lcov: str, module_file: str) -> Any:
    """The module's record of an lcov report, in the shape ``brief_coverage`` gives."""
    record: dict[str, Any] | None = None
    for line in lcov.splitlines():
        key, _, value = line.partition(":")
        if key == "SF":
            record = {"missing": []} if os.path.basename(value) == module_file else None
        elif record is not None and key in ("LF", "LH", "BRF", "BRH") and value.isdigit():
            record[key] = int(value)
        elif record is not None and key == "DA" and value.endswith(",0"):
            record["missing"].append(int(value.split(",")[0]))
        elif record is not None and key == "end_of_record":
            totals = {
                "covered_lines": record.get("LH", 0),
                "num_statements": record.get("LF", 0),
                "covered_branches": record.get("BRH", 0),
                "num_branches": record.get("BRF", 0),
            }
            files = {module_file: {"missing_lines": record["missing"], "missing_branches": []}}
            return {"totals": totals, "files": files}
    return None


def read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def tail(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()[-OUTPUT_TAIL:]
    except OSError:
        return ""


if __name__ == "__main__":
    main()
