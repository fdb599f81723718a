"""One cgroup per sandbox: a memory limit that counts every page its processes use
(shared and memfd mappings, tmpfs files included, which RLIMIT_DATA does not), a limit
on their number, a CPU share and the kernel's count of their CPU time. Made where the
cgroup file system is writable (root): under the cgroup this process is in, so the
host's own accounting still covers it.

The CPU share is what makes sandboxes fair to each other: the scheduler divides the CPU
between cgroups by weight first and only then between a cgroup's processes, so a
candidate that forks 60 busy processes shares its sandbox's part, not its neighbours'.
A quota (``cpu_quota``, in CPUs) caps it as well: the CFS bandwidth controller
(``cpu.cfs_quota_us`` in v1, ``cpu.max`` in v2) throttles a sandbox that used its quota
until the next period, even when cores are idle.
Its CPU time (``cpu_ns``, from ``cpuacct.usage`` or ``cpu.stat``) is the kernel's, for
every process of the sandbox: no code linked into the candidate can change it. Where the
CPU controllers cannot be used (v2 without ``cpu`` delegated), the memory and process
limits still hold and ``cpu_ns`` reads ``cpu.stat`` (always there in v2) or says None."""

from __future__ import annotations

import functools
import itertools
import os
import time

ROOT = "/sys/fs/cgroup"
HEADROOM = 16 * 1024 * 1024  # the zygote's own allocations while it serves a job
EXTRA_PIDS = 8  # the launcher, the zygote and the reset helper
CPU_SHARES = 1024  # v1: every sandbox the same weight (the kernel's default for one task)
CPU_WEIGHT = 100  # v2: the same
CFS_PERIOD_US = 100_000  # the kernel's default period: a quota is this share of it
# v1 controllers: the memory and pids ones are required (the cgroup's reason to be), the
# CPU ones are used when this kernel mounts them
REQUIRED_V1 = (("memory", "memory.limit_in_bytes"), ("pids", "pids.max"))
OPTIONAL_V1 = (("cpu", "cpu.shares"), ("cpuacct", "cpuacct.usage"))
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
        self.controllers: dict[str, str] = {}  # v1: controller -> its folder
        self.base = 0
        self.cpu_quota: float | None = None
        self._capped = False
        self._applied: tuple[int | None, int | None] = (None, None)

    @classmethod
    def create(cls, cpu_quota: float | None = None) -> SandboxCgroup | None:
        """A new cgroup, or None where none can be made; ``cpu_quota`` (CPUs) needs the
        CPU controller: OSError where it is missing (the caller asked for a hard cap)."""
        made = cls._create(f"assay-sandbox-{os.getpid()}-{next(_names)}")
        if made is not None and cpu_quota is not None:
            try:
                made._cap_cpu(cpu_quota)
            except OSError:
                made.remove()
                raise
        return made

    @classmethod
    def _create(cls, name: str) -> SandboxCgroup | None:
        if os.path.exists(f"{ROOT}/cgroup.controllers"):
            return cls._create_v2(name)
        made = cls(1, [])
        try:
            for controller, probe in REQUIRED_V1:
                made._add_v1(controller, name, probe)
        except OSError:
            made.remove()
            return None
        for controller, probe in OPTIONAL_V1:
            try:
                made._add_v1(controller, name, probe)
            except OSError:
                continue
        made._write("cpu.shares", str(CPU_SHARES))
        return made

    @classmethod
    def _create_v2(cls, name: str) -> SandboxCgroup | None:
        made = cls(2, [])
        folder = f"{ROOT}{_own_path('') or ''}/{name}".replace("//", "/")
        try:
            os.mkdir(folder, 0o755)
            made.folders.append(folder)
            if not os.path.exists(os.path.join(folder, "memory.max")):
                raise OSError(f"no memory.max in {folder}")
        except OSError:
            made.remove()
            return None
        made._write("cpu.weight", str(CPU_WEIGHT))  # where the cpu controller is delegated
        return made

    def _cap_cpu(self, cpus: float) -> None:
        """Check that a quota can be set; it is set while a job runs (``hold_cpu``)."""
        names = ("cpu.max",) if self.version == 2 else ("cpu.cfs_period_us", "cpu.cfs_quota_us")
        missing = [name for name in names if not self._file(name) or not os.path.exists(self._file(name))]
        if missing:
            raise OSError(f"no {', '.join(missing)} here: the CPU controller is not available for a quota")
        if self.version == 1:
            self._write("cpu.cfs_period_us", str(CFS_PERIOD_US))
        self.cpu_quota = cpus

    def hold_cpu(self, capped: bool) -> None:
        """The quota on while a job runs, off while the zygote starts and cleans up: at
        the cap, its own work would crawl (a reset beside 60 busy processes a job left,
        all throttled together, took seconds), and it is not the job's time."""
        if self.cpu_quota is None or capped == self._capped:
            return
        quota = str(max(1000, round(self.cpu_quota * CFS_PERIOD_US)))  # the kernel refuses under 1 ms
        if self.version == 2:
            self._write("cpu.max", f"{quota if capped else 'max'} {CFS_PERIOD_US}")
        else:
            self._write("cpu.cfs_quota_us", quota if capped else "-1")
        self._capped = capped

    def throttled(self) -> tuple[int, int] | None:
        """(periods throttled, nanoseconds throttled) as the kernel counts them, or None."""
        try:
            with open(self._file("cpu.stat")) as handle:
                stat = dict(line.split() for line in handle if line.strip())
        except (OSError, ValueError):
            return None
        if "throttled_usec" in stat:  # v2
            return int(stat["nr_throttled"]), int(stat["throttled_usec"]) * 1000
        if "throttled_time" in stat:
            return int(stat["nr_throttled"]), int(stat["throttled_time"])
        return None

    def _add_v1(self, controller: str, name: str, probe: str) -> None:
        if not os.path.isdir(f"{ROOT}/{controller}"):
            raise OSError(f"no {controller} hierarchy")
        folder = f"{ROOT}/{controller}{_own_path(controller) or ''}/{name}".replace("//", "/")
        os.mkdir(folder, 0o755)
        self.folders.append(folder)
        self.controllers[controller] = folder
        if not os.path.exists(os.path.join(folder, probe)):
            raise OSError(f"no {probe} in {folder}")

    @property
    def procs_files(self) -> list[str]:
        return [os.path.join(folder, "cgroup.procs") for folder in self.folders]

    @property
    def cpu_shared(self) -> bool:
        """Whether the sandbox has a CPU weight of its own (else it competes per process)."""
        return os.path.exists(self._file("cpu.weight" if self.version == 2 else "cpu.shares"))

    def describe(self) -> str:
        cpu = ", CPU weight" if self.cpu_shared else ""
        if self.cpu_quota is not None:
            cpu += f", CPU quota {self.cpu_quota:g} CPU"
        if self.version == 2:
            return f"cgroup v2 per sandbox (memory.max, memory.swap.max, pids.max{cpu})"
        return f"cgroup v1 per sandbox (memory.limit_in_bytes, pids.max{cpu})"

    def _file(self, name: str) -> str:
        if self.version == 2:
            return os.path.join(self.folders[0], name)
        folder = self.controllers.get(name.split(".", 1)[0], "")
        return os.path.join(folder, name) if folder else ""

    def cpu_ns(self) -> int | None:
        """CPU time every process of the sandbox has used, in nanoseconds, as the kernel
        counts it; None where this cgroup has no CPU accounting."""
        try:
            if self.version == 1:
                path = self._file("cpuacct.usage")
                if not path:
                    return None
                with open(path) as handle:
                    return int(handle.read())
            with open(self._file("cpu.stat")) as handle:
                for line in handle:
                    key, _, value = line.partition(" ")
                    if key == "usage_usec":
                        return int(value) * 1000
        except (OSError, ValueError):
            return None
        return None

    def oom_kills(self) -> int | None:
        """How many processes the kernel has killed for this cgroup's memory limit."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            with open(self._file(name)) as handle:
                for line in handle:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            return None
        return None

    def reset_peak(self) -> int | None:
        """Start counting the peak memory afresh; the usage now (the zygote's and
        spare's, the base a job's peak is over), or None where no peak can be reset."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            with open(self._file(name), "w") as handle:
                handle.write("0")
            return self.usage()
        except OSError:
            return None

    def peak(self) -> int | None:
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            with open(self._file(name)) as handle:
                return int(handle.read())
        except (OSError, ValueError):
            return None

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
        if path and os.path.exists(path):
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
