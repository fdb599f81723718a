"""The split of the suite in scripts/test: the load-sensitive files (tests/_scheduling.py)
exist under the names listed, and exactly their tests are marked ``serial``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
scheduling = sys.modules["assay_tests_scheduling"]  # loaded by the root conftest


def test_every_load_sensitive_file_exists() -> None:
    missing = [name for name in scheduling.LOAD_SENSITIVE if not (HERE / name).is_file()]
    assert not missing, f"moved or renamed? update tests/_scheduling.py: {missing}"


def test_the_serial_phase_collects_exactly_the_load_sensitive_files() -> None:
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "serial", str(HERE)],
        cwd=HERE.parent,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert collected.returncode == 0, collected.stdout[-2000:] + collected.stderr[-2000:]
    files = {line.split("::")[0] for line in collected.stdout.splitlines() if "::" in line}
    assert files == {f"tests/{name}" for name in scheduling.LOAD_SENSITIVE}
