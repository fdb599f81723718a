"""The suite passes from a checkout in a private (0700) folder whose path has a space.

The tests that run code as another uid are the ones a private folder breaks (that uid
cannot enter it), so only they run again, from a copy of this checkout placed in
``mktemp -d`` (mode 0700) under a folder named with a space.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
AFFECTED = ["tests/sandbox/test_unprivileged.py", "tests/sandbox/test_backends.py::test_run_script"]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.geteuid() != 0 or shutil.which("setpriv") is None,
        reason="the other-uid tests need root (to become nobody) and setpriv",
    ),
]


def test_tests_that_run_as_another_uid_pass_from_a_private_folder_with_a_space() -> None:
    private = Path(tempfile.mkdtemp(prefix="assay private "))
    try:
        private.chmod(0o700)
        checkout = private / "my checkout"
        for part in ("src", "tests"):
            shutil.copytree(
                ROOT / part, checkout / part, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
            )
        shutil.copy(ROOT / "pyproject.toml", checkout / "pyproject.toml")
        env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
        where = subprocess.run(
            [sys.executable, "-c", "import assay; print(assay.__file__)"],
            capture_output=True,
            text=True,
            env=env,
            cwd=checkout,
            check=True,
        )
        assert where.stdout.startswith(str(checkout)), "the copy, not this checkout, is tested"
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *AFFECTED],
            capture_output=True,
            text=True,
            env=env,
            cwd=checkout,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
        assert " passed" in done.stdout and "skipped" not in done.stdout, done.stdout[-500:]
    finally:
        shutil.rmtree(private, ignore_errors=True)
