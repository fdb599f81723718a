"""Durability: a committed batch survives power loss.

A real `assay run` writes into a store on a loop-mounted ext4 file system; a reader
watches the committed row count; then the file system is shut down without flushing
anything (``EXT4_IOC_SHUTDOWN`` with ``NOLOGFLUSH``: what was not on the device is gone,
as in a power cut). Once remounted, every row the reader had seen committed is there,
the file passes the full check, and the run, whose disk vanished under it, said so
(its own message, exit 3) instead of a stack trace.

Needs root and a loop device (mounting a file system); the synchronous setting tested
is the default (FULL). With ``ASSAY_SQLITE_SYNCHRONOUS=NORMAL`` the same test loses
the last committed rows (run it with DURABILITY_LEVEL=NORMAL to see).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import sqlite3
import struct
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cli.conftest import ASSAY, write_data

EXT4_IOC_SHUTDOWN = 0x8004587D  # _IOR('X', 125, __u32)
NOLOGFLUSH = 2  # shut down at once: neither data nor journal flushed


def _can_mount() -> bool:
    """Root with the right to mount, loop devices and mkfs.ext4 (a container may lack any)."""
    if os.geteuid() != 0 or not os.path.exists("/dev/loop-control") or not _which("mkfs.ext4"):
        return False
    with tempfile.TemporaryDirectory() as probe:
        image = os.path.join(probe, "probe.img")
        with open(image, "wb") as handle:
            handle.truncate(8 << 20)
        made = subprocess.run(["mkfs.ext4", "-q", "-F", image], capture_output=True)
        os.mkdir(os.path.join(probe, "mnt"))
        mounted = subprocess.run(
            ["mount", "-o", "loop", image, os.path.join(probe, "mnt")], capture_output=True
        )
        if made.returncode != 0 or mounted.returncode != 0:
            return False
        subprocess.run(["umount", os.path.join(probe, "mnt")], check=False)
    return True


def _which(name: str) -> str | None:
    for folder in ("/usr/sbin", "/sbin", "/usr/bin", "/bin"):
        if os.access(os.path.join(folder, name), os.X_OK):
            return os.path.join(folder, name)
    return None


@contextlib.contextmanager
def loop_ext4(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    image, mount = tmp_path / "disk.img", tmp_path / "mnt"
    with image.open("wb") as handle:
        handle.truncate(256 << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], check=True)
    mount.mkdir()
    subprocess.run(["mount", "-o", "loop", str(image), str(mount)], check=True)
    try:
        yield image, mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def committed(db: Path) -> int:
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
    except sqlite3.Error:
        return 0


@pytest.mark.slow
@pytest.mark.skipif(not _can_mount(), reason="mounting a loop ext4 file system needs root and loop devices")
def test_every_row_seen_committed_survives_a_power_cut(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text(
        "import time\n\ndef work(inputs):\n    time.sleep(0.002)\n    return inputs\n", encoding="utf-8"
    )
    write_data(project / "data.jsonl", 50_000)
    env = {k: v for k, v in os.environ.items() if k != "ASSAY_DATABASE_URL"}
    env["ASSAY_SQLITE_SYNCHRONOUS"] = os.environ.get("DURABILITY_LEVEL", "FULL")
    with loop_ext4(tmp_path) as (image, mount):
        db = mount / "db.sqlite"
        run = subprocess.Popen(
            [str(ASSAY), "run", "app:work", "--data", "data.jsonl", "--db", str(db), "--experiment", "cut"],
            cwd=project,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            seen = 0
            while seen < 3000:
                assert run.poll() is None, run.communicate()[1]
                seen = max(seen, committed(db))
                time.sleep(0.01)
            seen = max(seen, committed(db))  # the last count read before the cut
            fd = os.open(mount, os.O_RDONLY)
            try:
                fcntl.ioctl(fd, EXT4_IOC_SHUTDOWN, struct.pack("I", NOLOGFLUSH))
            finally:
                os.close(fd)
            try:
                _, err = run.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                run.send_signal(signal.SIGKILL)
                _, err = run.communicate()
        finally:
            if run.poll() is None:
                run.kill()
                run.communicate()
        assert run.returncode == 3, err
        assert "the disk failed to read or write" in err or "cannot be written" in err, err
        assert "--resume" in err
    # "power back on": the image mounted again, its journal replayed
    with contextlib.ExitStack() as stack:
        again = tmp_path / "again"
        again.mkdir()
        subprocess.run(["mount", "-o", "loop", str(image), str(again)], check=True)
        stack.callback(subprocess.run, ["umount", "-l", str(again)], check=False)
        survived = committed(again / "db.sqlite")
        assert survived >= seen, f"{seen} rows were seen committed, {survived} survived"
        checked = subprocess.run(
            [str(ASSAY), "store", "check", "--full", "--db", str(again / "db.sqlite")],
            capture_output=True,
            text=True,
            env=env,
        )
        assert checked.returncode == 0, checked.stderr + checked.stdout
