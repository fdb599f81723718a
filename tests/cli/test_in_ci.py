"""The GitHub Actions job of docs/ci.md, run as written: its `run:` lines in a fresh virtual
environment where assay is installed (not the source tree), on a real project folder."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "docs" / "ci.md"

APP = """
ANSWERS = {f"q{i}": f"a{i}" for i in range(40)}


def answer(inputs):
    return {"answer": ANSWERS.get(inputs["question"], "?")}


def correct(outputs, reference_outputs):
    return outputs["answer"] == reference_outputs["answer"]
"""


def workflow_commands() -> dict[str, list[str]]:
    """The shell lines of each named step of the workflow in docs/ci.md."""
    block = re.search(r"```yaml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert block, "docs/ci.md has no yaml block"
    steps: dict[str, list[str]] = {}
    name = "unnamed"
    lines = block.group(1).splitlines()
    for index, line in enumerate(lines):
        named = re.match(r"\s*- name: (.*)", line)
        if named:
            name = named.group(1)
        command = re.match(r"\s*(?:- )?run: (.*)", line)
        if not command:
            continue
        if command.group(1) == "|":
            indent = len(lines[index + 1]) - len(lines[index + 1].lstrip())
            body = []
            for following in lines[index + 1 :]:
                if len(following) - len(following.lstrip()) < indent:
                    break
                body.append(following.strip())
            steps.setdefault(name, []).extend(body)
        else:
            steps.setdefault(name, []).append(command.group(1))
    return steps


def fresh_venv(where: Path) -> Path:
    """A new virtual environment with assay installed from a copy of the source (as a
    wheel would be: no editable link); its dependencies come from the test environment."""
    source = where / "source"
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(
        subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            str(source),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return venv


def test_the_readme_workflow_has_the_steps_the_test_runs() -> None:
    steps = workflow_commands()
    assert steps["unnamed"] == ["pip install assay"]
    assert any("--baseline main-nightly" in c and "--fail-under" in c for c in steps["Gate the pull request"])
    assert any("--experiment main-nightly" in c for c in steps["Refresh the baseline"])


@pytest.mark.slow
def test_the_readme_ci_job_in_a_fresh_venv(tmp_path: Path) -> None:
    venv = fresh_venv(tmp_path)
    project = tmp_path / "project"
    (project / "evals").mkdir(parents=True)
    (project / "evals" / "app.py").write_text(APP, encoding="utf-8")
    with (project / "evals" / "qa.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(40):
            handle.write(json.dumps({"inputs": {"question": f"q{i}"}, "outputs": {"answer": f"a{i}"}}) + "\n")
    summary = tmp_path / "step-summary.md"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASSAY_", "VIRTUAL_ENV", "PYTHON"))}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}", GITHUB_STEP_SUMMARY=str(summary))
    steps = workflow_commands()

    def step(name: str) -> subprocess.CompletedProcess[str]:
        script = "\n".join(steps[name]).replace("${{ github.event.number }}", "42")
        return subprocess.run(
            ["bash", "-c", f"set -e\n{script}"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    version = subprocess.run(["assay", "--version"], env=env, capture_output=True, text=True)
    assert version.stdout.startswith("assay ") and shutil.which("assay", path=env["PATH"]) == str(
        venv / "bin" / "assay"
    )
    nightly = step("Refresh the baseline")
    assert nightly.returncode == 0, nightly.stderr
    assert "40 rows. Stored as main-nightly" in nightly.stdout and "\x1b[" not in nightly.stdout
    assert step("Refresh the baseline").returncode == 0  # the next night replaces it

    gate = step("Gate the pull request")
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "correct >= 0.8 (CI lower bound)" in gate.stdout and "FAIL" not in gate.stdout
    junit = ET.parse(project / "reports" / "evals.xml").getroot()
    assert junit.find("testsuite").get("failures") == "0"  # type: ignore[union-attr]

    # A pull request that breaks a quarter of the answers fails the build.
    app = project / "evals" / "app.py"
    app.write_text(APP + "\nANSWERS.update({f'q{i}': 'wrong' for i in range(0, 40, 4)})\n", encoding="utf-8")
    broken = step("Gate the pull request")
    assert broken.returncode == 1, broken.stdout + broken.stderr
    failed = [line for line in broken.stdout.splitlines() if "FAIL" in line]
    assert any(line.startswith("correct >= 0.8") for line in failed), broken.stdout
    assert any("regression" in line or "main-nightly" in line for line in failed), broken.stdout
    junit = ET.parse(project / "reports" / "evals.xml").getroot().find("testsuite")
    assert junit is not None and int(junit.get("failures") or 0) >= 2 + 10  # gates and the 10 rows
    assert summary.read_text(encoding="utf-8").count("### assay: `pr-42-") == 2
