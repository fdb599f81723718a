"""The "Shared results on PostgreSQL" section of docs/team.md: commands, run as written against the test
server: create the role and database with psql, run the demo, list it, serve the UI."""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

README = Path(__file__).parents[2] / "docs" / "team.md"


def section_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Shared results on PostgreSQL") :]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_postgres_section_runs_as_written(postgres_server_url: str, tmp_path: Path) -> None:
    from sqlalchemy import make_url

    server = make_url(postgres_server_url)
    team = f"assay_team_{uuid.uuid4().hex[:8]}"
    port = free_port()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    commands = section_commands()
    assert [c.split()[0] for c in commands] == ["psql", "export", "assay", "assay", "assay"]
    ui: subprocess.Popen[bytes] | None = None
    try:
        for line in commands:
            line = line.replace("assay_team", team).replace("127.0.0.1:5432", f"{server.host}:{server.port}")
            if line.startswith("psql "):
                line = line.replace("psql ", f"psql {shlex.quote(str(postgres_server_url))} ", 1)
            if line.startswith("export "):
                name, _, value = line.removeprefix("export ").partition("=")
                env[name] = value
                continue
            if line.startswith("assay ui"):
                line = line.replace("8765", str(port))
                ui = subprocess.Popen(shlex.split(line), env=env, cwd=tmp_path)
                continue
            done = subprocess.run(line, shell=True, env=env, cwd=tmp_path, capture_output=True, text=True,
                                  timeout=300, check=False)  # fmt: skip
            assert done.returncode == 0, f"{line}: {done.stdout}{done.stderr}"
            assert "change-me" not in done.stdout + done.stderr  # the password is never shown
            if line == "assay experiments":
                assert re.search(r"toxic-demo-\w+ .*completed", done.stdout)
        assert ui is not None
        listing = _get_json(f"http://127.0.0.1:{port}/api/experiments", ui)
        assert [e["status"] for e in listing["experiments"]] == ["completed"]
    finally:
        if ui is not None:
            ui.terminate()
            ui.wait(timeout=30)


def _get_json(url: str, process: subprocess.Popen[bytes]) -> dict:
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, "the UI exited"
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return dict(json.load(response))
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
