"""One cgroup per sandbox: a memory limit that counts every page its processes use
(shared and memfd mappings, tmpfs files included, which RLIMIT_DATA does not) and a
limit on their number. Made where the cgroup file system is writable (root): under
the cgroup this process is in, so the host's own accounting still covers it."""

from __future__ import annotations

import functools
import itertools
import os
import time

ROOT = "/sys/fs/cgroup"
HEADROOM = 16 * 1024 * 1024  # the zygote's own allocations while it serves a job
EXTRA_PIDS = 8  # the launcher, the zygote and the reset helper
_names = itertools.count(1)


def _own_path(controller: str) -> str | None:
    """This process's cgroup in ``controller``'s hierarchy ("" for cgroup v2)."""
    try:
        with open("/proc/self/cgroup") as handle:
            for line in handle:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if controller in controllers.split(","):
                    return path
    except OSError:
        return None
    return None


class SandboxCgroup:
    def __init__(self, version: int, folders: list[str]) -> None:
        self.version = version
        self.folders = folders
        self.base = 0
        self._applied: tuple[int | None, int | None] = (None, None)

    @classmethod
    def create(cls) -> SandboxCgroup | None:
        name = f"assay-sandbox-{os.getpid()}-{next(_names)}"
        if os.path.exists(f"{ROOT}/cgroup.controllers"):
            own = _own_path("")
            layout = [(2, f"{ROOT}{own or ''}/{name}".replace("//", "/"), "memory.max")]
        else:
            layout = [
                (1, f"{ROOT}/{c}{_own_path(c) or ''}/{name}".replace("//", "/"), f)
                for c, f in (("memory", "memory.limit_in_bytes"), ("pids", "pids.max"))
            ]
        made = cls(layout[0][0], [])
        try:
            for _, folder, probe in layout:
                os.mkdir(folder, 0o755)
                made.folders.append(folder)
                if not os.path.exists(os.path.join(folder, probe)):
                    raise OSError(f"no {probe} in {folder}")
        except OSError:
            made.remove()
            return None
        return made

    @property
    def procs_files(self) -> list[str]:
        return [os.path.join(folder, "cgroup.procs") for folder in self.folders]

    def describe(self) -> str:
        if self.version == 2:
            return "cgroup v2 per sandbox (memory.max, memory.swap.max, pids.max)"
        return "cgroup v1 per sandbox (memory.limit_in_bytes, pids.max)"

    def _file(self, name: str) -> str:
        folder = self.folders[0] if self.version == 2 or name.startswith("memory") else self.folders[-1]
        return os.path.join(folder, name)

    def usage(self) -> int:
        name = "memory.current" if self.version == 2 else "memory.usage_in_bytes"
        with open(self._file(name)) as handle:
            return int(handle.read())

    def settle(self) -> None:
        """Once the zygote is ready: its own memory is the base of every job's limit."""
        self.base = self.usage()

    def apply(self, memory_bytes: int | None, max_processes: int | None) -> None:
        if (memory_bytes, max_processes) == self._applied:
            return
        memory = "max" if memory_bytes is None else str(self.base + HEADROOM + memory_bytes)
        pids = "max" if max_processes is None else str(max_processes + EXTRA_PIDS)
        if self.version == 2:
            self._write("memory.max", memory)
            self._write("memory.swap.max", "0")
        else:
            self._write("memory.limit_in_bytes", "-1" if memory == "max" else memory)
        self._write("pids.max", pids)
        self._applied = (memory_bytes, max_processes)

    def _write(self, name: str, value: str) -> None:
        path = self._file(name)
        if os.path.exists(path):
            with open(path, "w") as handle:
                handle.write(value)

    def remove(self) -> None:
        """After every process in it has exited (a dying cgroup refuses for a moment)."""
        for folder in reversed(self.folders):
            for _ in range(50):
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
        self.folders = []


@functools.lru_cache(maxsize=1)
def available() -> str | None:
    """How memory is limited here: a cgroup description, or None (then RLIMIT_AS)."""
    probe = SandboxCgroup.create()
    if probe is None:
        return None
    try:
        return probe.describe()
    finally:
        probe.remove()


LAUNCH_SCRIPT = (
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); done; exec "$@"'
)


def wrap(argv: list[str], cgroup: SandboxCgroup) -> list[str]:
    """``argv`` started inside ``cgroup``: a shell joins it, then execs the launcher, so
    the sandbox's first process and all it starts are counted from their first page."""
    files = cgroup.procs_files
    return ["/bin/sh", "-c", LAUNCH_SCRIPT, "sh", str(len(files)), *files, *argv]
