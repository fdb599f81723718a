"""`assay run` as a real process on a project folder: reports, gates, exit codes, CI files."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.cli.conftest import run_assay

from assay import Client

RUN = ("run", "app:answer", "--data", "data.jsonl", "-e", "app:correct")


def test_a_passing_run_prints_a_plain_report_and_exits_0(project: Path) -> None:
    done = run_assay(
        *RUN, "--summary", "app:accuracy", "--experiment", "first", "--fail-under", "correct=0.7", cwd=project
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "\x1b[" not in out  # no colour codes in a CI log
    lines = out.splitlines()
    assert any(line.split()[:3] == ["correct", "higher", "0.800"] for line in lines), out
    assert any(line.split()[:2] == ["accuracy", "0.800"] for line in lines), out
    assert "10 rows. Stored as first" in out
    gate = next(line for line in lines if line.startswith("correct >= 0.7"))
    assert "pass" in gate and "0.800 >= 0.7" in gate
    stored = Client(str(project / ".assay" / "assay.db")).read_experiment("first")
    assert len(stored) == 10 and stored.experiment.status == "completed"


def test_a_gate_on_the_mean_or_the_lower_bound_fails_the_build(project: Path) -> None:
    on_mean = run_assay(*RUN, "--fail-under", "correct=0.9", cwd=project)
    assert on_mean.returncode == 1
    assert "FAIL" in next(line for line in on_mean.stdout.splitlines() if line.startswith("correct >= 0.9"))
    # 0.8 passes 0.7 on the mean, but 10 rows leave a CI whose lower bound is ~0.5.
    lower = run_assay(*RUN, "--fail-under", "correct=0.7@lower", cwd=project)
    assert lower.returncode == 1, lower.stdout
    verdict = next(line for line in lower.stdout.splitlines() if "CI lower bound" in line)
    assert "FAIL" in verdict and "0.490 < 0.7" in verdict
    summary_gate = run_assay(*RUN, "--summary", "app:accuracy", "--fail-under", "accuracy=0.85", cwd=project)
    assert summary_gate.returncode == 1 and "0.800 < 0.85" in summary_gate.stdout


def test_usage_and_data_errors_exit_2_with_one_message(project: Path) -> None:
    cases = {
        ("run", "nosuch:answer", "--data", "data.jsonl"): "no module named 'nosuch'",
        ("run", "app:answr", "--data", "data.jsonl"): "has no attribute 'answr' (did you mean 'answer'",
        ("run", "app:answer", "--data", "data.jsonl", "-e", "exact_mach"): "did you mean 'exact_match'",
        ("run", "app:answer", "--data", "missing.jsonl"): "missing.jsonl: no such file",
        ("run", "app:answer", "--data", "data.jsonl", "--fail-under", "correct>0.8"): "must be METRIC=NUMBER",
        (
            "run",
            "app:answer",
            "--data",
            "data.jsonl",
            "--fail-under",
            "correct=0.8@low",
        ): "after '@' write 'lower'",
        ("run", "app:answer", "--data", "data.jsonl", "--resume"): "--resume needs --experiment",
        ("run", "app", "--data", "data.jsonl"): "must be MODULE:NAME",
    }
    for args, message in cases.items():
        done = run_assay(*args, cwd=project)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert message in done.stderr, (args, done.stderr)
        assert "Traceback" not in done.stderr
    # A gate's syntax is checked before the run: nothing was stored by the bad gates above.
    assert not Client(str(project / ".assay" / "assay.db")).list_experiments()
    typo = run_assay(*RUN, "--fail-under", "corect=0.8", cwd=project)
    assert typo.returncode == 2 and "no metric 'corect' (did you mean 'correct'?)" in typo.stderr


def test_an_import_error_inside_the_user_module_names_its_line(project: Path) -> None:
    (project / "bad.py").write_text("import json\nimport not_installed_anywhere\n", encoding="utf-8")
    done = run_assay("run", "bad:f", "--data", "data.jsonl", cwd=project)
    assert done.returncode == 2
    assert "importing 'bad' failed: ModuleNotFoundError" in done.stderr and "line 2" in done.stderr


def test_a_run_whose_target_always_fails_exits_3(project: Path) -> None:
    done = run_assay("run", "app:broken", "--data", "data.jsonl", "-e", "app:correct", cwd=project)
    assert done.returncode == 3, done.stderr
    assert "the target failed on all 10 rows" in done.stderr and "always down" in done.stderr


def test_json_is_the_only_thing_on_stdout(project: Path) -> None:
    done = run_assay(*RUN, "--experiment", "j", "--json", "--fail-under", "correct=0.9", cwd=project)
    assert done.returncode == 1
    payload = json.loads(done.stdout)
    assert payload["experiment"] == "j" and payload["rows"] == 10 and payload["exit_code"] == 1
    assert payload["metrics"]["correct"]["mean"] == 0.8 and payload["passed"] is False
    assert payload["gates"] == [
        {
            "gate": "correct >= 0.9",
            "metric": "correct",
            "observed": 0.8,
            "threshold": 0.9,
            "passed": False,
            "detail": "0.800 < 0.9",
        }
    ]


def test_junit_markdown_and_the_github_step_summary(project: Path) -> None:
    summary = project / "step-summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    done = run_assay(
        *RUN,
        "--experiment",
        "ci",
        "--fail-under",
        "correct=0.7",
        "--fail-under",
        "correct=0.9",
        "--junit-xml",
        "reports/junit.xml",
        "--markdown",
        "reports/summary.md",
        cwd=project,
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert done.returncode == 1
    suite = ET.parse(project / "reports" / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    # two gates and the two rows whose reference disagrees (examples 0 and 5)
    assert [c.get("name") for c in cases[:2]] == ["correct >= 0.7", "correct >= 0.9"]
    assert len(cases) == 4 and suite.get("tests") == "4" and suite.get("failures") == "3"
    assert cases[0].find("failure") is None and cases[1].find("failure") is not None
    assert all("correct = 0" in (c.find("failure").get("message") or "") for c in cases[2:])  # type: ignore[union-attr]
    markdown = (project / "reports" / "summary.md").read_text(encoding="utf-8")
    assert "| correct >= 0.9 | **FAIL** | 0.800 < 0.9 |" in markdown
    assert "| correct | 0.800 | [0.490, 0.943] | 10 | 0 |" in markdown
    appended = summary.read_text(encoding="utf-8")
    assert appended.startswith("earlier step\n") and markdown in appended


def test_metadata_repetitions_prefix_and_a_builtin_evaluator(project: Path) -> None:
    done = run_assay(
        "run",
        "app:answer",
        "--data",
        "data.jsonl",
        "-e",
        "app:correct",
        "-e",
        "exact_match",
        "--prefix",
        "nightly",
        "--repetitions",
        "2",
        "--concurrency",
        "3",
        "--metadata",
        "commit=abc123",
        "--metadata",
        "model=m-1",
        cwd=project,
    )
    assert done.returncode == 0, done.stderr
    client = Client(str(project / ".assay" / "assay.db"))
    (record,) = client.list_experiments()
    assert record.name.startswith("nightly-") and record.metadata == {"commit": "abc123", "model": "m-1"}
    results = client.read_experiment(record.name)
    assert len(results) == 20 and set(results.aggregate) == {"correct", "exact_match"}


def test_resume_continues_a_named_experiment(project: Path) -> None:
    first = run_assay(*RUN, "--experiment", "again", cwd=project)
    assert first.returncode == 0
    clash = run_assay(*RUN, "--experiment", "again", cwd=project)
    assert clash.returncode == 2 and "already exists" in clash.stderr
    resumed = run_assay(*RUN, "--experiment", "again", "--resume", cwd=project)
    assert resumed.returncode == 0 and "10 rows. Stored as again" in resumed.stdout
