"""A test whose requirement is missing is skipped locally, naming what to install, and
fails in CI (``ASSAY_CI=1``): CI cannot go green by skipping."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

CONFTEST = f"""
import importlib.util
spec = importlib.util.spec_from_file_location("reqs", {str(HERE / "_requirements.py")!r})
reqs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reqs)

def pytest_configure(config):
    reqs.configure(config)

def pytest_collection_modifyitems(items):
    reqs.mark(items)

def pytest_runtest_setup(item):
    reqs.check(item)
"""

PROBE = """
import pytest

@pytest.mark.podman
def test_needs_podman():
    pass

def test_needs_nothing():
    pass
"""


def _run(tmp_path: Path, ci: bool) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (tmp_path / "test_probe.py").write_text(PROBE, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_CI"}
    env["PATH"] = str(tmp_path)  # no podman on it
    if ci:
        env["ASSAY_CI"] = "1"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rsf",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            # plugins of this environment the probe does not use (~3 s of CPU at each start)
            *("-p", "no:langsmith_plugin", "-p", "no:schemathesis", "-p", "no:hypothesispytest"),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )


def test_a_missing_requirement_is_a_skip_naming_the_install_line(tmp_path: Path) -> None:
    result = _run(tmp_path, ci=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed, 1 skipped" in result.stdout
    assert "needs podman (apt install podman" in result.stdout


def test_in_ci_a_missing_requirement_fails(tmp_path: Path) -> None:
    result = _run(tmp_path, ci=True)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 passed, 1 error" in result.stdout  # failed in setup: an error, never a pass
    assert "CI must run this test, but it needs podman" in result.stdout


@pytest.mark.parametrize("marker", ["postgres", "ray", "browser", "podman", "toolchains"])
def test_every_requirement_marker_is_registered(pytestconfig: pytest.Config, marker: str) -> None:
    assert any(line.startswith(f"{marker}:") for line in pytestconfig.getini("markers"))
