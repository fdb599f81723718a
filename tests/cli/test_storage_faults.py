"""Storage faults under a real `assay run`: a full disk, a read-only file system and a
store locked by another process each get their own message, naming the next step, and
exit 3 (a run-time failure; 2 is kept for usage and data errors). The rows committed
before the fault are kept, whole, and `--resume` goes on from them once it is fixed.

The file systems are real (a size-limited tmpfs, remounted read-only): mounting needs
root. (The failing-disk case is tests/cli/test_power_loss.py.)"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cli.conftest import ASSAY, write_data

APP = """
def work(inputs):
    return {"text": inputs["q"] * 400}
"""


def _can_mount_tmpfs() -> bool:
    """Root with the right to mount (a container may be root without it)."""
    if os.geteuid() != 0:
        return False
    with tempfile.TemporaryDirectory() as probe:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", probe], capture_output=True
        )
        if mounted.returncode != 0:
            return False
        subprocess.run(["umount", probe], check=False)
    return True


needs_root = pytest.mark.skipif(
    not _can_mount_tmpfs(), reason="mounting a tmpfs needs root and CAP_SYS_ADMIN"
)


@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def assay(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "ASSAY_DATABASE_URL"}
    environment.update(env)
    return subprocess.run(
        [str(ASSAY), *args], cwd=project, env=environment, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "app.py").write_text(APP, encoding="utf-8")
    write_data(folder / "data.jsonl", 3000)
    return folder


def rows(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])


@pytest.mark.slow
@needs_root
def test_a_full_disk_says_so_keeps_what_was_committed_and_resumes(project: Path, tmp_path: Path) -> None:
    with tmpfs(tmp_path / "small", "6m") as disk:
        db = disk / "db.sqlite"
        run = ("run", "app:work", "--data", "data.jsonl", "--db", str(db), "--experiment", "big")
        full = assay(project, *run)
        assert full.returncode == 3, full.stderr
        assert "the disk is full" in full.stderr and "Free space" in full.stderr, full.stderr
        assert "--resume" in full.stderr and "Traceback" not in full.stderr
        kept = rows(db)
        assert 0 < kept < 3000
        subprocess.run(["mount", "-o", "remount,size=256m", str(disk)], check=True)
        checked = assay(project, "store", "check", "--full", "--db", str(db))
        assert checked.returncode == 0, checked.stderr + checked.stdout
        resumed = assay(project, *run, "--resume")
        assert resumed.returncode == 0, resumed.stderr
        assert rows(db) == 3000


@pytest.mark.slow
@needs_root
def test_a_read_only_file_system_says_so(project: Path, tmp_path: Path) -> None:
    with tmpfs(tmp_path / "ro", "64m") as disk:
        db = disk / "db.sqlite"
        first = assay(
            project, "run", "app:work", "--data", "data.jsonl", "--db", str(db), "--experiment", "a"
        )
        assert first.returncode == 0, first.stderr
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        second = assay(
            project, "run", "app:work", "--data", "data.jsonl", "--db", str(db), "--experiment", "b"
        )
        assert second.returncode == 3, second.stderr
        assert "read-only" in second.stderr and "--db a writable path" in second.stderr, second.stderr
        assert "Traceback" not in second.stderr


HOLDER = """
    import sqlite3, sys, time
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    print("holding", flush=True)
    time.sleep(120)
"""


@pytest.mark.slow
def test_a_store_locked_by_another_process_names_it(project: Path) -> None:
    db = project / "db.sqlite"
    first = assay(project, "run", "app:work", "--data", "data.jsonl", "--db", str(db), "--experiment", "a")
    assert first.returncode == 0, first.stderr
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLDER), str(db)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        locked = assay(
            project,
            *("run", "app:work", "--data", "data.jsonl", "--db", str(db), "--experiment", "b"),
            ASSAY_SQLITE_BUSY_TIMEOUT="0.5",
        )
    finally:
        holder.kill()
        holder.communicate()
    assert locked.returncode == 3, locked.stderr
    assert "is locked by another process" in locked.stderr, locked.stderr
    assert f"held by pid {holder.pid}" in locked.stderr and "--resume" in locked.stderr
