"""Warm sandboxes, leased one job at a time; the backend chosen once per pool."""

from __future__ import annotations

import atexit
import os
import threading
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from assay.errors import SandboxError, SandboxUnavailableError
from assay.sandbox import _cgroup, _jobs, _program, _stdio
from assay.sandbox._backends import BACKENDS, LANDLOCK_WRITABLE, Backend
from assay.sandbox._children import DEFAULT_LIMITS
from assay.sandbox._launch import LaunchContext, Runtime
from assay.sandbox._sandbox import Sandbox, SandboxSettings
from assay.sandbox._seccomp import DESCRIPTION as SECCOMP_DESCRIPTION
from assay.sandbox._seccomp import IPC_REFUSED, filter_program
from assay.sandbox._slots import Slots
from assay.sandbox.config import BACKEND_ENV, BACKEND_LEVELS, MIN_LEVEL_ENV, Limits, SandboxConfig
from assay.sandbox.errors import SandboxIsolationWarning
from assay.sandbox.languages import Language
from assay.sandbox.results import Call, CallOutcome, FunctionRun, ProgramRun, ScriptRun


def choose_backend(config: SandboxConfig, user_namespace: bool) -> Backend:
    wanted = config.resolved_backend()
    if wanted != "auto" and wanted not in BACKENDS:
        raise SandboxUnavailableError(f"unknown sandbox backend {wanted!r} (from the environment)")
    required = config.required_level()
    names = list(BACKENDS) if wanted == "auto" else [wanted]
    reasons: list[str] = []
    for name in names:
        backend: Backend = BACKENDS[name]()
        if backend.level < required:
            floor = next(n for n, level in BACKEND_LEVELS.items() if level == required)
            reasons.append(f"{name}: below the required minimum level ({floor})")
            continue
        reason = backend.unavailable_reason(user_namespace and name != "rlimit")
        if reason is None:
            return backend
        reasons.append(f"{name}: {reason}")
    raise SandboxUnavailableError("no sandbox backend can run here: " + "; ".join(reasons))


# what Landlock confined in a backend without namespaces (the ABI sets how much)
_CONFINED = (
    "confined by Landlock to the sandbox's work folder (emptied after every job) and "
    "{}: host folders are readable, never writable"
)
WRITES_CONFINED = _CONFINED.format(", ".join(LANDLOCK_WRITABLE))
WRITES_CONFINED_OWN_UID = _CONFINED.format(
    "/dev/null (not /dev/shm: as your own uid, nothing tells a job's files there from yours)"
)
WRITES_ANYWHERE = (
    "wherever its uid may write (no Landlock in this kernel): what a dedicated uid left at the "
    "top of /tmp, /var/tmp and message-queue mounts, and anywhere in /dev/shm, is removed "
    "between jobs"
)
TCP_REFUSED = "TCP bind and connect refused by Landlock; other protocols (UDP) reach the network"
SCOPED = (
    "signals only to the job's own processes and no connection to an abstract unix socket "
    "made outside the job (Landlock scopes)"
)


def _landlock_learned(confines: list[str], dedicated: bool) -> dict[str, str]:
    confined = WRITES_CONFINED if dedicated else WRITES_CONFINED_OWN_UID
    learned = {"writes": confined if "writes" in confines else WRITES_ANYWHERE}
    if "tcp" in confines:
        learned["network"] = TCP_REFUSED
    if "scopes" in confines:
        learned["scopes"] = SCOPED
    return learned


class SandboxPool:
    """Sandboxes for candidates and, separately, for test programs: a test program never
    shares a sandbox (or a PID namespace) with the code it tests."""

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        root = os.geteuid() == 0
        wants_userns = self.config.user_namespace
        user_namespace = (not root) if wants_userns is None else wants_userns
        self.backend = choose_backend(self.config, user_namespace)
        if self.backend.name == "rlimit":
            user_namespace = False
        self.runtime = Runtime.discover(self.config.node)
        self.settings = SandboxSettings(
            self.runtime,
            user_namespace,
            self.config.workdir_bytes,
            self.config.extra_ro_paths,
            self.config.uid_base,
            self._memory_cgroup(),
            self.config.cpu_quota,
        )
        self._isolation: dict[str, Any] = {}
        size = self.config.worker_count()
        self.candidates = Slots(self._new_sandbox, size)
        self.checkers = Slots(self._new_sandbox, size)
        self._notes: list[str] = []
        self._description = self._describe()
        # Shared builds lie in the parent's 0700 folder: private where the sandboxes see
        # a file system of their own or run as another uid (not rlimit as a plain user).
        self.builds_private = self._description["protections"]["filesystem_isolation"] or self._dedicated()
        _warn_once(self._description)
        _open_pools.add(self)

    def _memory_cgroup(self) -> bool:
        wanted = self.config.memory_cgroup
        if self.config.cpu_quota is not None:
            if wanted is False:
                raise ValueError("cpu_quota needs the sandbox cgroup: not with memory_cgroup=False")
            wanted = True
        if wanted is False:
            return False
        if _cgroup.available() is None:
            if wanted:
                raise SandboxUnavailableError(
                    f"{'cpu_quota' if self.config.cpu_quota is not None else 'memory_cgroup=True'} "
                    "needs a cgroup per sandbox, and none can be made here "
                    "(the cgroup file system is not writable: run as root)"
                )
            return False
        return True

    def _new_sandbox(self) -> Sandbox:
        return Sandbox(self.backend, self.settings, on_start=self.note_sandbox)

    def _dedicated(self) -> bool:
        """A dedicated host uid per sandbox (root, no user namespace)."""
        return not self.settings.user_namespace and os.geteuid() == 0

    def _describe(self) -> dict[str, Any]:
        dedicated = self._dedicated()
        plan = self.backend.plan(
            LaunchContext(
                runtime=self.runtime,
                control_fd=-1,
                workdir_bytes=self.settings.workdir_bytes,
                extra_ro_paths=self.settings.extra_ro_paths,
                sandbox_uid=self.settings.uid_base if dedicated else None,
                user_namespace=self.settings.user_namespace,
                host_workroot="/nonexistent",
                scratch="/nonexistent",
            )
        )
        user = (
            f"a dedicated unprivileged host uid per sandbox (from {self.settings.uid_base})"
            if dedicated
            else plan.user_label
        )
        seccomp = filter_program() is not None
        missing = plan.protections.missing()
        if not seccomp:
            missing.append("no system-call filter: libseccomp or its Python bindings (pyseccomp) are missing")
        return {
            "backend": self.backend.name,
            "level": self.backend.level,
            "user": user,
            "protections": plan.protections.as_dict(),
            "missing": missing,
            "workers": self.config.worker_count(),
            "memory_limit": (
                _cgroup.available()
                if self.settings.memory_cgroup
                else "RLIMIT_AS (Python), RLIMIT_DATA and V8's heap limit (JavaScript)"
            ),
            "cpu_quota": self.config.cpu_quota,  # CPUs per sandbox, or None: weights only
            "seccomp": SECCOMP_DESCRIPTION if seccomp else None,
            "ipc": IPC_REFUSED if seccomp else "a fresh IPC namespace per job",
        }

    def describe(self) -> dict[str, Any]:
        """Backend, user, protections present and missing: for results' metadata."""
        description = {**self._description, "missing": list(self._description["missing"]), **self._isolation}
        if self._notes:
            description["notes"] = list(self._notes)
        return description

    def note_sandbox(self, sandbox: Sandbox) -> None:
        """Facts learned when a sandbox starts (warned once, kept in describe())."""
        self._isolation = self._learned_isolation(sandbox)
        unreadable = sandbox.info.get("unreadable") or []
        if unreadable and not self._notes:
            note = (
                f"the sandbox's uid cannot read {', '.join(unreadable)}: only modules the "
                "zygote preloaded can be imported (make the runtime world-readable, or "
                "use the bubblewrap or unshare backend)"
            )
            self._notes.append(note)
            warnings.warn(note, SandboxIsolationWarning, stacklevel=2)

    def _learned_isolation(self, sandbox: Sandbox) -> dict[str, Any]:
        """What the zygote found it could do (the plan says what we asked for)."""
        learned: dict[str, Any] = {}
        if sandbox.info.get("seccomp"):
            learned["ipc"] = IPC_REFUSED
            if not sandbox.info.get("ipc_private"):
                learned["ipc"] += "; in the host's IPC namespace (its objects are listed in /proc/sysvipc)"
        elif sandbox.info.get("ipc_namespace"):
            learned["ipc"] = "a fresh IPC namespace per job"
        else:
            learned["ipc"] = "shared by the jobs of a sandbox (no system-call filter, no user namespaces)"
        if self._description["seccomp"] and not sandbox.info.get("seccomp"):
            learned["seccomp"] = None
        if not self._description["protections"]["filesystem_isolation"]:
            learned.update(_landlock_learned(sandbox.info.get("landlock") or [], self._dedicated()))
        return learned

    def close(self) -> None:
        self.candidates.close()
        self.checkers.close()

    def stray_processes(self) -> list[int]:
        """Host pids of processes left behind by any sandbox this pool ever started (idle
        ones after their reset, killed ones entirely). Empty unless something is wrong;
        a diagnostic, used by the tests. Call it while no job runs."""
        sandboxes = [s for slots in (self.candidates, self.checkers) for s in list(slots.started)]
        for sandbox in sandboxes:  # all resets first: a dead sandbox's uid may be reused
            if not sandbox.dead:
                try:
                    if sandbox.resident is not None:  # a resident checker is no stray,
                        sandbox.begin_reset()  # but it is not counted either
                    sandbox.finish_reset()
                except SandboxError:
                    pass
        return sorted({pid for sandbox in sandboxes for pid in sandbox.stray_processes()})

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # the jobs: assay.sandbox._jobs and _program
    def run_function(
        self,
        language: Language,
        code: str,
        func_name: str,
        calls: Sequence[Call],
        timeout: float,
        limits: Limits = DEFAULT_LIMITS,
        on_outcome: Callable[[CallOutcome], CallOutcome] | None = None,
        call_timeouts: Sequence[float] | None = None,
    ) -> FunctionRun:
        """Call ``func_name`` from ``code`` once per call (see ``_jobs.run_function``)."""
        return _jobs.run_function(
            self, language, code, func_name, calls, timeout, limits, on_outcome, call_timeouts
        )

    def run_test_program(
        self,
        language: Language,
        program: str,
        test: str,
        entry_point: str,
        timeout: float,
        limits: Limits = DEFAULT_LIMITS,
        prompt: str = "",
    ) -> ProgramRun:
        """``test`` against ``program`` in two sandboxes (see ``_program``)."""
        return _program.run_test_program(self, language, program, test, entry_point, timeout, limits, prompt)

    def run_script(
        self, language: Language, code: str, timeout: float, limits: Limits = DEFAULT_LIMITS
    ) -> ScriptRun:
        """Run ``code`` as a program; its exit code and output are the result."""
        return _jobs.run_script(self, language, code, timeout, limits)

    def stdio(
        self,
        language: Language,
        code: str,
        limits: Limits = DEFAULT_LIMITS,
        checker: tuple[Language, str] | None = None,
    ) -> _stdio.StdioJudge:
        """A stdin/stdout program built once and run per test (see ``_stdio``); use it
        as a context manager."""
        return _stdio.StdioJudge(self, language, code, limits, checker)


_warned: set[tuple[str, tuple[str, ...]]] = set()
_warn_lock = threading.Lock()


def _warn_once(description: dict[str, Any]) -> None:
    missing = tuple(description["missing"])
    if not missing:
        return
    key = (description["backend"], missing)
    with _warn_lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(
        f"the {description['backend']} sandbox lacks protections: " + "; ".join(missing),
        SandboxIsolationWarning,
        stacklevel=4,
    )


_pools: dict[Any, SandboxPool] = {}
_pools_lock = threading.Lock()
# Each row asks for its pool (twice): the config itself and the two variables that can
# change its choice find it without building the pool's key (~25 us: a dataclass copy).
_recent: dict[tuple[SandboxConfig, str, str], SandboxPool] = {}
RECENT_LIMIT = 64
_DEFAULT_CONFIG = SandboxConfig()


def get_pool(config: SandboxConfig | None = None) -> SandboxPool:
    """The shared pool for ``config`` (created on first use, closed at exit)."""
    config = config or _DEFAULT_CONFIG
    recent = (config, os.environ.get(BACKEND_ENV, ""), os.environ.get(MIN_LEVEL_ENV, ""))
    pool = _recent.get(recent)
    if pool is not None:
        return pool
    key = (config.pool_key(), config.resolved_backend(), config.required_level())
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = SandboxPool(config.pool_key())
        if len(_recent) >= RECENT_LIMIT:
            _recent.clear()
        _recent[recent] = pool
        return pool


_open_pools: weakref.WeakSet[SandboxPool] = weakref.WeakSet()


def shutdown_pools() -> None:
    """Close the shared pools, and at exit every pool still open (their sandboxes would
    die with us anyway; this also removes their host folders)."""
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
        _recent.clear()
    for pool in pools:
        pool.close()


def _close_everything() -> None:
    shutdown_pools()
    for pool in list(_open_pools):
        pool.close()


atexit.register(_close_everything)
