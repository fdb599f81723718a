"""The folder where repository snapshots and their environments are built once and kept.

The sandbox mounts this one folder read-only (one pool of warm sandboxes serves every
instance), so it must lie outside the sandbox's work root (``/work``) and be readable by
the sandbox's unprivileged uid all the way down. Each entry is built in a staging folder
and renamed into place under a file lock: two workers (threads or processes) asking for
the same entry build it once.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from assay.errors import SandboxSetupError

CACHE_ENV = "ASSAY_PATCHES_CACHE"
SANDBOX_WORKROOT = "/work"


def cache_root() -> Path:
    """``$ASSAY_PATCHES_CACHE``, else ``~/.cache/assay/patches`` when other users can reach
    it, else a folder of our own in the temporary folder."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        root = Path(configured).resolve()
        _check_outside_workroot(root)
        return _own_folder(root)
    home = Path.home() / ".cache" / "assay" / "patches"
    if _reachable_by_others(home.parent) and not _under_workroot(home.resolve()):
        return _own_folder(home.resolve())
    return _own_folder(Path(tempfile.gettempdir()) / f"assay-patches-{os.geteuid()}")


def _under_workroot(path: Path) -> bool:
    return (str(path) + "/").startswith(SANDBOX_WORKROOT + "/")


def _check_outside_workroot(root: Path) -> None:
    if _under_workroot(root):
        raise SandboxSetupError(
            f"{CACHE_ENV}={root} lies under {SANDBOX_WORKROOT}, which the sandbox mounts over: "
            "choose a folder elsewhere"
        )


def _reachable_by_others(path: Path) -> bool:
    folder = path.resolve()
    while not folder.exists():
        folder = folder.parent
    while True:
        if not os.stat(folder).st_mode & stat.S_IXOTH:
            return False
        if folder.parent == folder:
            return True
        folder = folder.parent


def _own_folder(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if root.stat().st_uid != os.geteuid():
        raise SandboxSetupError(f"{root} belongs to another user; set {CACHE_ENV} to a folder of yours")
    os.chmod(root, 0o755)
    return root


def digest(*parts: bytes | str) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        hasher.update(len(data).to_bytes(8, "big") + data)
    return hasher.hexdigest()[:24]


@contextmanager
def locked(root: Path, name: str) -> Iterator[None]:
    """An exclusive lock on ``name`` between threads and processes (flock)."""
    locks = root / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_once(target: Path, build: Callable[[Path], None]) -> bool:
    """Make ``target`` with ``build(staging)`` unless it exists; True if this call built it."""
    if target.is_dir():
        return False
    with locked(target.parent.parent, f"{target.parent.name}-{target.name}"):
        if target.is_dir():  # another worker built it while we waited
            return False
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=target.parent))
        try:
            build(staging)
            readable(staging)
            os.rename(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return True


def readable(folder: Path) -> None:
    """The sandbox may run as another uid: every folder traversable, every file readable."""
    os.chmod(folder, 0o755)
    for directory, dirs, files in os.walk(folder):
        for name in dirs:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                os.chmod(path, 0o755)
        for name in files:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                mode = os.stat(path).st_mode
                os.chmod(path, (mode | 0o444) & ~0o022)
