"""A command that needs an extra not installed (`assay ui` without `assay[ui]`, as after
the README's first command) says what to install and exits 2 (a setup step), not 3 ("the
run failed")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from assay import Client

WITHOUT_FASTAPI = """
import sys
sys.modules["fastapi"] = None  # as in an environment without the ui extra: import fails
from assay.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_assay_ui_without_its_extra_names_the_install_and_exits_2(tmp_path: Path) -> None:
    Client(str(tmp_path / "db.sqlite")).close()
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_FASTAPI, "--db", "db.sqlite", "ui"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert (
        done.stderr
        == "assay: error: the assay web UI needs fastapi, which is not installed: pip install 'assay[ui]'\n"
    )
