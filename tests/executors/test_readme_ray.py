"""The "Big runs on Ray" commands of docs/team.md, run as written: a two-node cluster started with
its ``ray start`` lines, then its ``assay run`` line; the experiment is read back."""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from assay import Client

pytestmark = pytest.mark.slow

groups_of_nodes = sys.modules["assay_tests_executors_groups"]  # loaded by conftest.py

README = Path(__file__).resolve().parents[2] / "docs" / "team.md"
APP = """\
def answer(inputs):
    with open("/proc/self/cmdline", "rb") as handle:
        where = "a ray worker" if b"ray::" in handle.read() else "the driver"
    return {"answer": inputs["question"].upper(), "where": where}


def correct(outputs, reference_outputs):
    return outputs["answer"] == reference_outputs["answer"]
"""


def ray_commands() -> list[str]:
    section = README.read_text(encoding="utf-8").split("## Big runs on Ray", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, 'docs/team.md: "Big runs on Ray" has no bash block'
    return [line for line in block.group(1).splitlines() if line.strip()]


def port_of(commands: list[str]) -> int:
    match = re.search(r"--port=(\d+)", commands[1])
    assert match, commands[1]
    return int(match.group(1))


def test_the_readme_ray_commands_run_as_written(tmp_path: Path) -> None:
    commands = ray_commands()
    assert "RAY_AUTH_MODE=token" in commands[0] and "get-auth-token --generate" in commands[0]
    assert [c.split()[:2] for c in commands[1:3]] == [["ray", "start"], ["ray", "start"]]
    assert "assay run" in commands[3] and "ASSAY_EXECUTOR=ray" in commands[3]
    port = port_of(commands)
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0, (
            f"port {port} is taken: the README's cluster cannot start"
        )
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "app.py").write_text(APP, encoding="utf-8")
    with open(tmp_path / "evals" / "qa.jsonl", "w", encoding="utf-8") as handle:
        for i in range(40):
            row = {"inputs": {"question": f"q{i}"}, "outputs": {"answer": f"Q{i}" if i % 4 else "wrong"}}
            handle.write(json.dumps(row) + "\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".ray").mkdir()
    (home / ".ray" / "auth_token").write_text(secrets.token_hex(32))  # as an earlier ray.init() leaves
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "RAY_USAGE_STATS_ENABLED": "0",
        "HOME": str(home),  # the commands make and read ~/.ray/auth_token
    }
    for name in ("ASSAY_DATABASE_URL", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_TOKEN"):
        env.pop(name, None)
    # One shell in a session of its own: the nodes' processes stay in its process group,
    # which is ended at the end (never `ray stop`: it ends every Ray on the machine).
    shell = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", "\n".join(commands)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = shell.communicate(timeout=240)
    finally:
        left = groups_of_nodes.kill_and_wait(shell.pid)
    assert shell.returncode == 0, output[-3000:]
    assert not left, f"the README's nodes outlived their process group's SIGKILL: {left}"
    client = Client(str(tmp_path / ".assay" / "assay.db"))
    rows = list(client.read_experiment("on-ray"))
    assert len(rows) == 40
    assert {row["run"].outputs["where"] for row in rows} == {"a ray worker"}
    scores = [row["evaluation_results"]["results"][0].score for row in rows]
    assert sum(scores) == 30
    client.close()
