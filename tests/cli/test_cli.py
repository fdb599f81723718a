"""The `assay` command, run as a real process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def assay(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "assay.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_demo_runs_and_reports_then_show_reads_it_back(tmp_path: Path) -> None:
    demo = assay("demo", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    out = demo.stdout
    for text in ("correct", "explained", "f1_score", "0.889", "95% CI", "20 rows", "toxic-demo-"):
        assert text in out, text
    assert (tmp_path / ".assay" / "assay.db").exists()
    name = out.split("Stored as ")[1].split()[0]
    shown = assay("show", name, cwd=tmp_path)
    assert shown.returncode == 0 and "f1_score" in shown.stdout and "0.900" in shown.stdout
    listed = assay("experiments", cwd=tmp_path)
    assert name in listed.stdout and "completed" in listed.stdout
    assert "Toxic queries (demo)" in assay("datasets", cwd=tmp_path).stdout
    again = assay("demo", cwd=tmp_path)  # the bundled dataset is reused
    assert again.returncode == 0 and "f1_score" in again.stdout


def test_errors_are_messages_not_tracebacks(tmp_path: Path) -> None:
    from assay import Client

    Client(str(tmp_path / ".assay" / "assay.db")).close()
    shown = assay("show", "missing", cwd=tmp_path)
    assert shown.returncode == 2
    assert "assay: error: no experiment named 'missing'" in shown.stderr
    assert "Traceback" not in shown.stderr


@pytest.mark.slow
def test_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    """On a TTY, evaluate() shows rows done of total, errors and rate, then the report."""
    import os
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: `assay demo` on a pseudo-terminal
        os.chdir(tmp_path)
        os.execv(sys.executable, [sys.executable, "-m", "assay.cli", "demo"])
    output = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        output += chunk
    _, status = os.waitpid(pid, 0)
    text = output.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0
    for shown in ("evaluating", "/20", "0 errors", "rows/s", "f1_score", "95% CI"):
        assert shown in text, shown
