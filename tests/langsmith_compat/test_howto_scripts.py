"""LangSmith how-to scripts for this round's areas (``howto/``: runs logged by hand with
``create_run`` / ``update_run``; an app traced with ``wrap_anthropic``) run on assay in a
subprocess with only ``langsmith`` replaced by ``assay``, and print what
``<script>.expected.txt`` holds."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.testing import FakeAnthropicServer

HOWTO = Path(__file__).parent / "howto"


def _run(script: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    swapped = tmp_path / script
    swapped.write_text(re.sub(r"\blangsmith\b", "assay", (HOWTO / script).read_text()))
    assert "langsmith" not in swapped.read_text()
    return subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", str(swapped)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"ASSAY_DATABASE_URL": str(tmp_path / "store.db"), "PATH": "/usr/bin:/bin", **env},
    )


def _echo_last_word(request: dict[str, Any]) -> str:
    return "echo " + str(request["messages"][-1]["content"]).split()[-1]


@pytest.mark.slow
def test_runs_logged_by_hand(tmp_path: Path) -> None:
    done = _run("log_runs_by_hand.py", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (HOWTO / "log_runs_by_hand.expected.txt").read_text()


@pytest.mark.slow
def test_an_app_traced_with_wrap_anthropic(tmp_path: Path) -> None:
    with FakeAnthropicServer(handler=_echo_last_word) as server:
        done = _run(
            "wrap_anthropic_app.py",
            tmp_path,
            ANTHROPIC_BASE_URL=server.base_url,
            ANTHROPIC_API_KEY="sk-ant-test",
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (HOWTO / "wrap_anthropic_app.expected.txt").read_text()
    assert len(server.requests) == 3 and server.requests[1]["stream"] is True
