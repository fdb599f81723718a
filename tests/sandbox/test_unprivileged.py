"""Every backend as a real unprivileged user (uid nobody), not just as root: user
namespaces for bubblewrap and unshare, the child-subreaper supervisor for rlimit."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.sandbox.harness import landlock

SYSTEM_PYTHON = "/usr/bin/python3"
SOURCE = str(Path(assay.__file__).resolve().parent.parent)
PROBE = str(Path(__file__).with_name("_unprivileged_probe.py"))

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or not os.path.exists(SYSTEM_PYTHON),
    reason="needs root (to become nobody), setpriv and a system Python readable by nobody",
)


@pytest.fixture(scope="module")
def readable_copy() -> Iterator[tuple[str, str]]:
    """The probe and the ``assay`` package, copied where uid nobody can read them: the
    checkout may sit in a private (0700) folder, or below a path nobody cannot enter."""
    root = Path(tempfile.mkdtemp(prefix="assay-unprivileged-"))
    try:
        shutil.copytree(
            Path(SOURCE) / "assay", root / "src" / "assay", ignore=shutil.ignore_patterns("__pycache__")
        )
        shutil.copy(PROBE, root / "probe.py")
        for path in [root, *root.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        yield str(root / "probe.py"), str(root / "src")
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def report(loopback_port: int, readable_copy: tuple[str, str]) -> dict[str, Any]:
    probe, source = readable_copy
    done = subprocess.run(
        [
            "setpriv",
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            SYSTEM_PYTHON,
            "-I",
            probe,
            source,
            str(loopback_port),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def loopback_port() -> Any:
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield server.getsockname()[1]
    server.close()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["bubblewrap", "unshare"])
def test_namespace_backends_without_root(report: dict[str, Any], backend: str) -> None:
    entry = report[backend]
    uid, network, sees_etc, own_pid_namespace, signal, shm = entry["value"]
    assert (uid, network, sees_etc, own_pid_namespace, shm) == (65534, "refused", False, True, "written")
    assert signal == "ProcessLookupError"  # the probe is in no namespace it sees
    assert entry["missing"] == []
    assert entry["user"] == "uid 65534 in a user namespace (host: uid 65534)"
    assert entry["timed_out"] and entry["strays"] == [] and entry["left_running"] == []


@pytest.mark.slow
def test_rlimit_backend_without_root(report: dict[str, Any]) -> None:
    entry = report["rlimit"]
    # no network namespace; TCP refused where Landlock has ABI 4
    assert entry["value"][:2] == [65534, "refused" if landlock.abi_version() >= 4 else "connected"]
    # the job runs as the probe's own uid: only Landlock's scope (ABI 6) keeps it from the probe
    assert entry["value"][4] == ("PermissionError" if landlock.abi_version() >= 6 else "signalled")
    # as the probe's uid nothing would tell the job's files in the host's /dev/shm from its own
    assert entry["value"][5] == ("PermissionError" if landlock.abi_version() >= 1 else "written")
    assert len(entry["missing"]) == 4
    assert entry["timed_out"]
    assert entry["left_running"] == [], "the subreaper killed the daemon and the hanging child"
