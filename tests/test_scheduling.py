"""The split of the suite in scripts/test: the load-sensitive files (tests/_scheduling.py)
exist under the names listed, and exactly their tests are marked ``serial``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
scheduling = sys.modules["assay_tests_scheduling"]  # loaded by the root conftest


def test_every_load_sensitive_file_exists() -> None:
    missing = [name for name in scheduling.LOAD_SENSITIVE if not (HERE / name).is_file()]
    assert not missing, f"moved or renamed? update tests/_scheduling.py: {missing}"


def collected_files(phase: str, *args: str, folder: Path = HERE) -> set[str]:
    env = {**os.environ, "ASSAY_TEST_PHASE": phase}
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *args, str(folder)],
        cwd=HERE.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert collected.returncode == 0, collected.stdout[-2000:] + collected.stderr[-2000:]
    return {line.split("::")[0] for line in collected.stdout.splitlines() if "::" in line}


def test_the_phases_split_the_suite_between_them() -> None:
    serial = collected_files("serial")
    assert serial == {f"tests/{name}" for name in scheduling.LOAD_SENSITIVE}
    parallel = collected_files("parallel")
    assert parallel and not parallel & serial
    assert "tests/test_scheduling.py" in parallel


def test_a_callers_marker_expression_applies_within_a_phase() -> None:
    code = HERE / "code"
    serial_here = {f"tests/{name}" for name in scheduling.LOAD_SENSITIVE if name.startswith("code/")}
    slow_serial = collected_files("serial", "-m", "slow", folder=code)
    assert slow_serial and slow_serial < serial_here
