"""``serve()`` in a real process: the host rule, the token rule, and no token in the logs."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from ui_testdata import build_scenario, free_port

from assay.store import open_store

TOKEN = "process-token-1234"


@pytest.fixture
def database(tmp_path: Path) -> str:
    path = tmp_path / "served.db"
    store = open_store(str(path))
    build_scenario(store)
    store.close()
    return f"sqlite:///{path}"


def start_serve(database: str, host: str, port: int, env: dict[str, str]) -> subprocess.Popen[str]:
    code = f"from assay.ui import serve; serve({database!r}, host={host!r}, port={port})"
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **env},
    )


# only a bound for a server that never opens its port (the wait ends when it does, or
# when it exits): at load 13, serve() on ui/test_memory_bound.py's 200,000-row store took
# over 20 s to open it
SERVE_START_SECONDS = 120


def wait_for_port(port: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + SERVE_START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"serve() exited early:\n{process.communicate()[0]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"serve() did not open its port within {SERVE_START_SECONDS} s")


@pytest.fixture
def public_server(database: str) -> Iterator[tuple[int, subprocess.Popen[str]]]:
    port = free_port()
    process = start_serve(database, "0.0.0.0", port, {"ASSAY_UI_TOKEN": TOKEN})
    try:
        wait_for_port(port, process)
        yield port, process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=10)


@pytest.mark.slow
def test_serve_refuses_a_public_host_without_a_token(database: str) -> None:
    process = start_serve(database, "0.0.0.0", free_port(), {"ASSAY_UI_TOKEN": ""})
    output, _ = process.communicate(timeout=30)
    assert process.returncode != 0
    assert "refusing to serve on '0.0.0.0' without a token" in output


@pytest.mark.slow
def test_serve_on_a_public_host_demands_the_token_and_never_logs_it(
    public_server: tuple[int, subprocess.Popen[str]],
) -> None:
    port, process = public_server
    base = f"http://127.0.0.1:{port}"
    with httpx.Client(base_url=base) as client:
        assert client.get("/api/experiments").status_code == 401
        assert client.get("/experiments").status_code == 401
        authorized = client.get("/api/experiments", headers={"authorization": f"Bearer {TOKEN}"})
        assert authorized.status_code == 200 and authorized.json()["total"] == 2
        visit = client.get(f"/experiments?token={TOKEN}", follow_redirects=True)
        assert visit.status_code == 200 and "baseline" in visit.text
        assert str(visit.url) == f"{base}/experiments"
    process.terminate()
    output, _ = process.communicate(timeout=10)
    assert f"assay UI on http://0.0.0.0:{port}/" in output
    assert "token=<redacted>" in output  # the access log saw the visit...
    assert TOKEN not in output  # ...but never the token
