"""Failures you can see: an evaluator's errors are counted, their messages shown in every
report, and an evaluator that errored on every row (or past --max-error-rate) fails the run."""

from __future__ import annotations

import json
import socket
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.cli.conftest import run_assay

EVALUATORS = """
def judge_down(outputs):
    raise ConnectionError("judge unreachable at 127.0.0.1:9\\n(a second line, not shown)")


def sometimes(inputs, outputs):
    if inputs["q"] in ("q3", "q7"):
        raise ValueError(f"cannot parse the answer of {inputs['q']}")
    return 1
"""

RUN = ("run", "app:answer", "--data", "data.jsonl", "-e", "app:correct")


def with_evaluators(project: Path) -> Path:
    app = project / "app.py"
    app.write_text(app.read_text(encoding="utf-8") + EVALUATORS, encoding="utf-8")
    return project


def test_an_evaluator_erroring_on_every_row_fails_the_run_and_says_why(project: Path) -> None:
    with_evaluators(project)
    done = run_assay(
        *RUN,
        "-e",
        "app:judge_down",
        "--junit-xml",
        "out/junit.xml",
        "--markdown",
        "out/summary.md",
        cwd=project,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "judge_down: 10 of 10 rows errored" in out
    assert "10 x ConnectionError: judge unreachable at 127.0.0.1:9 (row " in out
    assert "a second line" not in out
    gate = next(line for line in out.splitlines() if line.startswith("judge_down errors"))
    assert "FAIL" in gate and "10 of 10 rows errored" in gate
    summary = (project / "out" / "summary.md").read_text(encoding="utf-8")
    assert "| judge_down | 10 of 10 | 10 x `ConnectionError: judge unreachable at 127.0.0.1:9`" in summary
    suite = ET.parse(project / "out" / "junit.xml").getroot()[0]
    [case] = [c for c in suite if c.get("classname") == "assay.errors"]
    assert case.get("name") == "judge_down"
    assert "judge unreachable" in (case.find("failure").text or "")


def test_an_unreachable_judge_fails_the_run_with_its_message(project: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        "ASSAY_JUDGE_MODEL": "openai/judge",
        "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "OPENAI_API_KEY": "sk-none",
    }
    (project / "data.jsonl").write_text(
        "".join(
            json.dumps({"inputs": {"q": f"q{i}"}, "outputs": {"answer": f"Q{i}"}}) + "\n" for i in range(3)
        ),
        encoding="utf-8",
    )
    done = run_assay(
        "run", "app:answer", "--data", "data.jsonl", "-e", "qa", cwd=project, env=env, timeout=300
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "3 of 3 rows errored" in done.stdout
    message = next(line for line in done.stdout.splitlines() if line.startswith("    3 x "))
    assert "ModelCallError" in message and f"cannot connect to 127.0.0.1:{port}" in message, done.stdout


def test_max_error_rate_gates_on_the_share_of_errors(project: Path) -> None:
    with_evaluators(project)
    tolerated = run_assay(*RUN, "-e", "app:sometimes", cwd=project)
    assert tolerated.returncode == 0, tolerated.stdout  # 2 of 10: not every row
    assert "sometimes: 2 of 10 rows errored" in tolerated.stdout
    assert "1 x ValueError: cannot parse the answer of q3 (row " in tolerated.stdout
    strict = run_assay(*RUN, "-e", "app:sometimes", "--max-error-rate", "0.1", cwd=project)
    assert strict.returncode == 1
    assert "FAIL" in next(
        line for line in strict.stdout.splitlines() if line.startswith("sometimes errors <= 0.1")
    )
    lenient = run_assay(*RUN, "-e", "app:sometimes", "--max-error-rate", "0.2", "--json", cwd=project)
    assert lenient.returncode == 0
    payload = json.loads(lenient.stdout)
    assert payload["errors"]["sometimes"]["errors"] == 2
    assert {m["message"] for m in payload["errors"]["sometimes"]["messages"]} == {
        "ValueError: cannot parse the answer of q3",
        "ValueError: cannot parse the answer of q7",
    }
    bad = run_assay(*RUN, "--max-error-rate", "5%", cwd=project)
    assert bad.returncode == 2 and "--max-error-rate '5%' is not a number" in bad.stderr


def test_show_prints_the_errors_and_the_failing_rows(project: Path) -> None:
    with_evaluators(project)
    stored = run_assay(*RUN, "-e", "app:sometimes", "--experiment", "nightly", cwd=project)
    assert stored.returncode == 0, stored.stdout + stored.stderr
    done = run_assay("show", "nightly", "--errors", "--failing", cwd=project)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "  sometimes: 2 of 10 rows errored" in lines
    failing = lines[lines.index("failing rows") + 1 :]
    # q0 and q5 have a wrong reference (correct = 0); q3 and q7 made `sometimes` raise
    assert len(failing) == 4, failing
    assert sum("sometimes: ValueError: cannot parse the answer of q" in line for line in failing) == 2
    assert sum("correct = 0" in line for line in failing) == 2
    assert all(line.startswith("  row ") and "(example " in line for line in failing)
    clean = run_assay("show", "nightly", "--failing", "--fail-under", "correct=0", cwd=project)
    assert "failing rows" in clean.stdout and "errors" not in clean.stdout.split("failing rows")[1]
