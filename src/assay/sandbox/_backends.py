"""The three ways to make a sandbox, strongest first, and how one is chosen.

bubblewrap: namespaces and mounts done by ``bwrap``. unshare: namespaces by util-linux
``unshare``, mounts by our own ``harness/confine.py``. rlimit: a plain process with
resource limits (and, as root, a dedicated uid): the last resort.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from typing import Protocol

from assay.sandbox._launch import (
    DEVICES,
    HARNESS_PARENT,
    SANDBOX_HARNESS_ROOT,
    SANDBOX_SHM,
    SANDBOX_UID,
    SANDBOX_WORKROOT,
    LaunchContext,
    LaunchPlan,
    host_layout,
    zygote_command,
)
from assay.sandbox._toolchains import SANDBOX_PREBUILT, cache_root
from assay.sandbox.protections import Protections

# what the zygote (PID 1, never running job code) keeps to set up, signal and clean up
# after children that drop to the sandbox's uid; the children keep nothing
ROOT_CAPS = ("CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL", "CAP_SETGID", "CAP_SETUID")


class Backend(Protocol):
    name: str
    level: int

    def unavailable_reason(self, user_namespace: bool) -> str | None: ...

    def plan(self, context: LaunchContext) -> LaunchPlan: ...


def _user_label(context: LaunchContext) -> str:
    if context.user_namespace:
        host = "root" if os.geteuid() == 0 else f"uid {os.geteuid()}"
        return f"uid {SANDBOX_UID} in a user namespace (host: {host})"
    return f"dedicated host uid {context.sandbox_uid}"


def _unprivileged(context: LaunchContext) -> bool:
    return context.sandbox_uid is not None or os.geteuid() != 0


def _probe(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=20, env={"PATH": "/usr/bin:/bin"}
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{argv[0]} failed to run: {exc}"
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip() or f"exit code {done.returncode}"
        return f"{argv[0]} does not work here: {detail}"
    return None


class Bubblewrap:
    name = "bubblewrap"
    level = 3

    def __init__(self) -> None:
        self.binary = shutil.which("bwrap")

    def unavailable_reason(self, user_namespace: bool) -> str | None:
        if self.binary is None:
            return "bwrap is not installed (apt-get install bubblewrap)"
        return _cached_probe(
            (
                self.binary,
                "--ro-bind",
                "/",
                "/",
                "--unshare-pid",
                "--unshare-net",
                *self._user_flags(user_namespace),
                "true",
            )
        )

    @staticmethod
    def _user_flags(user_namespace: bool) -> tuple[str, ...]:
        if user_namespace:
            return ("--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID))
        return ("--cap-drop", "ALL", *[f for cap in ROOT_CAPS for f in ("--cap-add", cap)])

    def plan(self, context: LaunchContext) -> LaunchPlan:
        assert self.binary is not None
        argv = [
            self.binary,
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--die-with-parent",
            "--new-session",
            "--as-pid-1",
            *self._user_flags(context.user_namespace),
        ]
        argv += ["--ro-bind", "/usr", "/usr"]
        links, dirs = host_layout()
        for link, target in links:
            argv += ["--symlink", target, link]
        for folder in dirs:
            argv += ["--ro-bind", folder, folder]
        mounts = [*context.runtime.read_only_paths(), *context.extra_ro_paths]
        for path in mounts:
            argv += _parents(path) + ["--ro-bind", path, path]
        argv += _parents(SANDBOX_HARNESS_ROOT + "/harness")
        argv += ["--ro-bind", os.path.join(HARNESS_PARENT, "harness"), SANDBOX_HARNESS_ROOT + "/harness"]
        argv += ["--ro-bind", cache_root(), SANDBOX_PREBUILT]  # compilers' prebuilt parts
        argv += ["--proc", "/proc", "--perms", "0755", "--dir", "/dev"]
        for device in DEVICES:
            argv += ["--dev-bind", device, device]
        argv += ["--symlink", "/proc/self/fd", "/dev/fd"]
        # POSIX shared memory and named semaphores (multiprocessing's locks and queues)
        argv += ["--perms", "1777", "--size", str(context.workdir_bytes), "--tmpfs", SANDBOX_SHM]
        argv += [
            "--perms",
            "0755",
            "--size",
            str(context.workdir_bytes),
            "--tmpfs",
            SANDBOX_WORKROOT,
            "--remount-ro",
            "/",
            "--chdir",
            "/",
        ]
        argv += zygote_command(context, {"shm_dir": SANDBOX_SHM})
        return LaunchPlan(
            argv=argv,
            user_label=_user_label(context),
            protections=Protections(True, True, True, _unprivileged(context), True),
        )


def _parents(path: str) -> list[str]:
    """bwrap creates missing parents as 0700; a dropped uid could not traverse them."""
    flags: list[str] = []
    parts = path.strip("/").split("/")[:-1]
    for index in range(len(parts)):
        flags += ["--perms", "0755", "--dir", "/" + "/".join(parts[: index + 1])]
    return flags


class Unshare:
    name = "unshare"
    level = 2

    def __init__(self) -> None:
        self.binary = shutil.which("unshare")

    def unavailable_reason(self, user_namespace: bool) -> str | None:
        if self.binary is None:
            return "unshare (util-linux) is not installed"
        return _cached_probe((self.binary, *self._namespace_flags(user_namespace), "true"))

    @staticmethod
    def _namespace_flags(user_namespace: bool) -> tuple[str, ...]:
        flags: tuple[str, ...] = (
            "--mount",
            "--pid",
            "--net",
            "--ipc",
            "--uts",
            "--fork",
            "--kill-child",
            "--propagation",
            "private",
        )
        if user_namespace:
            flags += ("--user", f"--map-user={SANDBOX_UID}", f"--map-group={SANDBOX_UID}", "--keep-caps")
        return flags

    def plan(self, context: LaunchContext) -> LaunchPlan:
        assert self.binary is not None and context.scratch is not None
        links, dirs = host_layout()
        binds = [("/usr", "/usr"), *[(d, d) for d in dirs]]
        binds += [(p, p) for p in [*context.runtime.read_only_paths(), *context.extra_ro_paths]]
        binds.append((os.path.join(HARNESS_PARENT, "harness"), SANDBOX_HARNESS_ROOT + "/harness"))
        binds.append((cache_root(), SANDBOX_PREBUILT))
        confine = {
            "new_root": context.scratch,
            "ro_binds": binds,
            "symlinks": [*links, ("/dev/fd", "/proc/self/fd")],
            "devices": list(DEVICES),
            "workroot": SANDBOX_WORKROOT,
            "shm": SANDBOX_SHM,
            "workdir_bytes": context.workdir_bytes,
            "python_path": list(context.runtime.python_path),
            "keep_setuid": not context.user_namespace,
        }
        argv = [self.binary, *self._namespace_flags(context.user_namespace)]
        # before confine.enter() runs, the harness is imported from its host folder
        argv += zygote_command(
            context, {"confine": confine, "boot_path": HARNESS_PARENT, "shm_dir": SANDBOX_SHM}
        )
        return LaunchPlan(
            argv=argv,
            user_label=_user_label(context),
            protections=Protections(True, True, True, _unprivileged(context), True),
        )


def _mqueue_mounts() -> list[str]:
    """The host's mounted POSIX message-queue file systems (/dev/mqueue under systemd):
    a job's uid can create queues there with a plain open(), which the system-call
    filter does not see, so the cleanup removes what the job left in them."""
    try:
        with open("/proc/self/mountinfo") as mounts:
            rows = [line.split(" - ", 1) for line in mounts]
    except OSError:
        return []
    found = [
        head.split()[4] for head, tail in (r for r in rows if len(r) == 2) if tail.split()[0] == "mqueue"
    ]
    return [_OCTAL_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), path) for path in found]


_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")  # mountinfo writes a space in a path as \040


# Where a job of the rlimit backend may write besides its work folder, where the kernel has
# Landlock: POSIX semaphores and shared memory (multiprocessing's locks and queues; with a
# dedicated uid only, whose leftovers the cleanup can tell apart), and the null device.
# Every other host folder is refused for writing, world-writable or not.
LANDLOCK_WRITABLE: tuple[str, ...] = ("/dev/shm", "/dev/null")


class RlimitOnly:
    name = "rlimit"
    level = 1

    def unavailable_reason(self, user_namespace: bool) -> str | None:
        return None

    def plan(self, context: LaunchContext) -> LaunchPlan:
        assert context.host_workroot is not None
        dedicated = context.sandbox_uid is not None
        # where a job may leave files for the next one: its own uid's entries are removed
        # (as your own uid nothing tells a job's files from yours: /dev/shm is not writable)
        scrub = ["/tmp", "/var/tmp", *_mqueue_mounts()] if dedicated else []
        writable = LANDLOCK_WRITABLE if dedicated else tuple(p for p in LANDLOCK_WRITABLE if p != "/dev/shm")
        harness_root = HARNESS_PARENT if context.sandbox_uid is None else readable_harness()
        runtime = list(context.runtime.python_path)
        private = any(os.path.isdir(p) and not _others_can_read(p) for p in runtime)
        view = readable_runtime(tuple(runtime)) if dedicated and private else {}
        argv = zygote_command(
            context,
            {
                "harness_root": harness_root,
                "boot_path": HARNESS_PARENT,
                "workroot": context.host_workroot,
                "scrub_dirs": scrub,  # at their top, as the sandbox's uid
                "scrub_deep": ["/dev/shm"] if dedicated else [],  # all through, as root
                "landlock_writable": [path for path in writable if os.path.exists(path)],
                "runtime_paths": [view.get(path, path) for path in runtime],
                "runtime_view": view,  # the zygote imports from the readable copy
            },
        )
        label = (
            f"dedicated host uid {context.sandbox_uid}"
            if context.sandbox_uid is not None
            else f"your own uid {os.geteuid()}"
        )
        return LaunchPlan(
            argv=argv,
            user_label=label,
            harness_root=harness_root,
            protections=Protections(
                process_isolation=False,
                network_isolation=False,
                filesystem_isolation=False,
                unprivileged_user=_unprivileged(context),
                complete_tree_kill=context.sandbox_uid is not None,
            ),
        )


@functools.cache
def readable_harness() -> str:
    """A folder whose ``harness/`` another uid can read (the role scripts run as the sandbox
    uid): the package itself when every folder above it lets others in, else a root-owned
    copy in a fresh temporary folder, removed at exit. A package in a private (0700) home
    or checkout is not readable by the sandbox uid."""
    if _others_can_read(os.path.join(HARNESS_PARENT, "harness")):
        return HARNESS_PARENT
    root = tempfile.mkdtemp(prefix="assay-harness-")
    atexit.register(shutil.rmtree, root, True)
    shutil.copytree(
        os.path.join(HARNESS_PARENT, "harness"),
        os.path.join(root, "harness"),
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    for folder, _, files in os.walk(root):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    return root


@functools.cache
def readable_runtime(paths: tuple[str, ...]) -> dict[str, str]:
    """A copy of the standard library the sandbox uid can read, for a runtime in a private
    home (``/root/.pyenv`` with the rlimit backend as root): hard links (a copy across
    file systems) in the root-owned toolchain cache, made once per runtime. Maps each
    folder of ``paths`` to its copy; without it only the modules the zygote preloaded
    import."""
    folders = [path for path in paths if os.path.isdir(path)]
    tops = [f for f in folders if not any(f != o and f.startswith(o + "/") for o in folders)]
    digest = hashlib.sha256("\0".join([sys.version, *tops]).encode()).hexdigest()[:16]
    root = os.path.join(cache_root(), "python-" + digest)
    if not os.path.isdir(root):
        _copy_runtime(tops, root)
    view: dict[str, str] = {}
    for folder in folders:
        index = next(i for i, top in enumerate(tops) if folder == top or folder.startswith(top + "/"))
        view[folder] = os.path.normpath(os.path.join(root, str(index), os.path.relpath(folder, tops[index])))
    return view


def _copy_runtime(tops: list[str], root: str) -> None:
    staging = tempfile.mkdtemp(prefix=".staging-", dir=os.path.dirname(root))
    try:
        for index, top in enumerate(tops):
            ignore = shutil.ignore_patterns("site-packages", "test", "idle_test")
            shutil.copytree(
                top, os.path.join(staging, str(index)), ignore=ignore, copy_function=_link_or_copy
            )
        for folder, _, _ in os.walk(staging):
            os.chmod(folder, 0o755)
        os.rename(staging, root)
    except OSError:
        if not os.path.isdir(root):  # else another process made it first
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _link_or_copy(source: str, target: str) -> None:
    """A hard link shares its mode: it must let others read (the copy is made so)."""
    if os.stat(source).st_mode & 0o444 == 0o444:
        try:
            os.link(source, target)
            return
        except OSError:
            pass
    shutil.copy2(source, target)
    os.chmod(target, (os.stat(target).st_mode | 0o444) & ~0o022)


def _others_can_read(path: str) -> bool:
    folder = os.path.realpath(path)
    if not os.stat(folder).st_mode & stat.S_IROTH:
        return False
    while True:
        if not os.stat(folder).st_mode & stat.S_IXOTH:
            return False
        parent = os.path.dirname(folder)
        if parent == folder:
            return True
        folder = parent


@functools.cache
def _cached_probe(argv: tuple[str, ...]) -> str | None:
    return _probe(list(argv))


BACKENDS: dict[str, type] = {"bubblewrap": Bubblewrap, "unshare": Unshare, "rlimit": RlimitOnly}
