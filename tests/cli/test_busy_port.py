"""A port already in use gives `assay ui` and `assay serve-evaluators` an error naming the
port and what to do (exit 2), before announcing a server; `--port 0` takes any free port
and says which."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay import Client

EVALUATORS = "def exact(outputs, reference_outputs):\n    return True\n\nEVALUATORS = {'exact': exact}\n"


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port some other program listens on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield other.getsockname()[1]


def assay(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    Client(str(tmp_path / "db.sqlite")).close()  # a store to serve
    (tmp_path / "my_evals.py").write_text(EVALUATORS, encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, "-m", "assay.cli", "--db", "db.sqlite", *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "ASSAY_UI_TOKEN": "", "ASSAY_SERVICE_TOKEN": ""},
    )


@pytest.mark.parametrize(
    ("command", "name"),
    [(("ui",), "assay ui"), (("serve-evaluators", "my_evals:EVALUATORS"), "assay serve-evaluators")],
)
def test_a_busy_port_is_named_with_what_to_do(
    tmp_path: Path, taken_port: int, command: tuple[str, ...], name: str
) -> None:
    process = assay(tmp_path, *command, "--port", str(taken_port))
    out, err = process.communicate(timeout=120)
    assert process.returncode == 2, err
    assert f"assay: error: port {taken_port} on 127.0.0.1 is already in use" in err, err
    assert f"an earlier `{name}` still running" in err and "--port 0 picks any free one" in err
    suggested = int(err.split("start on another port: --port ")[1].split()[0])
    assert suggested > taken_port
    with socket.socket() as probe:  # the port it suggests is free
        probe.bind(("127.0.0.1", suggested))
    assert "Errno" not in err and "Traceback" not in err
    assert "on http://" not in out  # no server announced that never started


def test_port_0_takes_a_free_port_and_says_which(tmp_path: Path) -> None:
    process = assay(tmp_path, "ui", "--port", "0")
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # an event: the server announces where it listens
        assert line.startswith("assay UI on http://127.0.0.1:"), line
        url = line.split()[3]
        port = int(url.rsplit(":", 1)[1].strip("/"))
        assert port != 0
        with urllib.request.urlopen(url, timeout=60) as page:  # it listens there
            assert page.status == 200
    finally:
        process.terminate()
        process.communicate(timeout=60)
