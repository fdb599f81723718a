"""What every backend needs to start a sandbox, and what it hands back."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from typing import Any

from assay.sandbox.protections import Protections

HARNESS_PARENT = os.path.dirname(os.path.abspath(__file__))
SANDBOX_HARNESS_ROOT = "/opt/assay"
SANDBOX_WORKROOT = "/work"
SANDBOX_SHM = "/dev/shm"  # a size-capped tmpfs of the sandbox, emptied by each cleanup
SANDBOX_UID = 65534
BOOT = (
    "import json, sys; options = json.loads(sys.argv[1]); "
    "sys.path.insert(0, options['boot_path']); "
    "from harness.zygote import main; main()"
)
# What candidates and tests commonly import, imported once in the zygote. Every fork
# copies the zygote's page tables, so heavy, rarely used modules (asyncio) stay out.
PRELOAD = [
    "typing",
    "math",
    "re",
    "collections",
    "itertools",
    "functools",
    "heapq",
    "bisect",
    "string",
    "random",
    "copy",
    "json",
    "hashlib",
    "operator",
    "traceback",
    "linecache",
    "shutil",  # honest code copies and removes trees with it
]
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONIOENCODING": "utf-8",
}


@dataclass(frozen=True)
class Runtime:
    """The language runtimes a sandbox exposes (read-only), found on the host."""

    python: str
    python_prefix: str
    python_path: tuple[str, ...]
    node: str | None

    @classmethod
    def discover(cls, node: str | None = None) -> Runtime:
        python = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
        prefix = os.path.realpath(sys.base_prefix)
        stdlib = tuple(
            p for p in sys.path if p and os.path.realpath(p).startswith(prefix) and "site-packages" not in p
        )
        node_path = node or shutil.which("node")
        return cls(python, prefix, stdlib, os.path.realpath(node_path) if node_path else None)

    def read_only_paths(self) -> list[str]:
        """Host folders to mount besides /usr (pyenv, conda, a node tarball...)."""
        paths = [self.python_prefix, os.path.dirname(self.python)]
        if self.node:
            paths.append(os.path.dirname(os.path.dirname(self.node)))
        return _outside_usr(paths)


def _outside_usr(paths: list[str]) -> list[str]:
    kept: list[str] = []
    for path in sorted(set(paths), key=len):
        if path in ("/", "/usr") or path.startswith("/usr/"):
            continue
        if any(path == k or path.startswith(k + "/") for k in kept):
            continue
        kept.append(path)
    return kept


@dataclass(frozen=True)
class LaunchContext:
    runtime: Runtime
    control_fd: int
    workdir_bytes: int
    extra_ro_paths: tuple[str, ...]
    sandbox_uid: int | None  # a dedicated host uid (root only), else None
    user_namespace: bool
    host_workroot: str | None = None  # rlimit backend: a private host folder
    scratch: str | None = None  # unshare backend: an empty host folder to mount on
    oom_protected: bool = False  # a cgroup limits memory; the zygote is shielded from it


@dataclass
class LaunchPlan:
    argv: list[str]
    protections: Protections
    user_label: str
    popen_kwargs: dict[str, Any] = field(default_factory=dict)
    harness_root: str = SANDBOX_HARNESS_ROOT


def zygote_command(context: LaunchContext, options: dict[str, Any]) -> list[str]:
    import json

    from assay.sandbox._seccomp import filter_program

    full = {
        "control_fd": context.control_fd,
        "drop_uid": context.sandbox_uid,
        "drop_gid": context.sandbox_uid,
        "env": BASE_ENV,
        "preload": PRELOAD,
        "harness_root": SANDBOX_HARNESS_ROOT,
        "boot_path": SANDBOX_HARNESS_ROOT,
        "workroot": SANDBOX_WORKROOT,
        "seccomp": (filter_program() or b"").hex(),
        "oom_protected": context.oom_protected,
        **options,
    }
    python = context.runtime.python
    return [python, "-I", "-S", "-B", "-c", BOOT, json.dumps(full)]


def host_layout() -> tuple[list[tuple[str, str]], list[str]]:
    """The top-level system folders: (symlink, target) pairs and real directories."""
    links: list[tuple[str, str]] = []
    dirs: list[str] = []
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(name):
            links.append((name, os.readlink(name)))
        elif os.path.isdir(name):
            dirs.append(name)
    return links, dirs


DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
