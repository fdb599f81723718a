"""Warm sandboxes, leased one job at a time; the backend chosen once per pool."""

from __future__ import annotations

import atexit
import os
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from assay.sandbox._backends import BACKENDS, Backend
from assay.sandbox._launch import LaunchContext, Runtime
from assay.sandbox._sandbox import Sandbox, SandboxSettings
from assay.sandbox.config import BACKEND_LEVELS, SandboxConfig
from assay.sandbox.errors import SandboxError, SandboxIsolationWarning, SandboxUnavailable


def choose_backend(config: SandboxConfig, user_namespace: bool) -> Backend:
    wanted = config.resolved_backend()
    if wanted != "auto" and wanted not in BACKENDS:
        raise SandboxUnavailable(f"unknown sandbox backend {wanted!r} (from the environment)")
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
    raise SandboxUnavailable("no sandbox backend can run here: " + "; ".join(reasons))


class _Slots:
    """At most ``size`` sandboxes, started lazily, each leased to one job at a time."""

    def __init__(self, make: Callable[[], Sandbox], size: int) -> None:
        self._make = make
        self._size = size
        self._idle: list[Sandbox] = []
        self._count = 0
        self._closed = False
        self._cond = threading.Condition()
        self.started: list[Sandbox] = []  # every sandbox ever started, for stray_processes

    @contextmanager
    def lease(self) -> Iterator[Sandbox]:
        sandbox = self._acquire()
        try:
            yield sandbox
        finally:
            self._release(sandbox)

    def _acquire(self) -> Sandbox:
        sandbox: Sandbox | None
        with self._cond:
            while True:
                if self._closed:
                    raise SandboxError("the sandbox pool is closed")
                if self._idle:
                    sandbox = self._idle.pop()
                    break

                if self._count < self._size:
                    self._count += 1
                    sandbox = None
                    break
                self._cond.wait()
        if sandbox is not None and self._ready(sandbox):
            return sandbox
        try:
            sandbox = self._make()
            sandbox.start()
            with self._cond:
                self.started.append(sandbox)
        except BaseException:
            with self._cond:
                self._count -= 1
                self._cond.notify()
            raise
        return sandbox

    def _ready(self, sandbox: Sandbox) -> bool:
        """Wait for the previous job's reset; a sandbox that fails it is replaced (the
        slot passes to its replacement)."""
        try:
            sandbox.finish_reset()
        except (SandboxError, OSError):
            sandbox.kill()
        return not sandbox.dead

    def _release(self, sandbox: Sandbox) -> None:
        if not sandbox.dead and sandbox.dirty:
            try:
                sandbox.begin_reset()
            except (SandboxError, OSError):
                sandbox.kill()
        with self._cond:
            keep = not sandbox.dead and not self._closed
            if keep:
                self._idle.append(sandbox)
            else:
                self._count -= 1
            self._cond.notify()
        if not keep:
            sandbox.kill()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._count -= len(idle)
            self._cond.notify_all()
        for sandbox in idle:
            sandbox.shutdown()


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
            self.runtime, user_namespace, self.config.workdir_bytes,
            self.config.extra_ro_paths, self.config.uid_base,
        )
        size = self.config.worker_count()
        self.candidates = _Slots(self._new_sandbox, size)
        self.checkers = _Slots(self._new_sandbox, size)
        self._notes: list[str] = []
        self._description = self._describe()
        _warn_once(self._description)
        _open_pools.add(self)

    def _new_sandbox(self) -> Sandbox:
        return Sandbox(self.backend, self.settings, on_start=self.note_sandbox)

    def _describe(self) -> dict[str, Any]:
        dedicated = not self.settings.user_namespace and os.geteuid() == 0
        plan = self.backend.plan(LaunchContext(
            runtime=self.runtime, control_fd=-1, workdir_bytes=self.settings.workdir_bytes,
            extra_ro_paths=self.settings.extra_ro_paths,
            sandbox_uid=self.settings.uid_base if dedicated else None,
            user_namespace=self.settings.user_namespace,
            host_workroot="/nonexistent", scratch="/nonexistent",
        ))
        user = (f"a dedicated unprivileged host uid per sandbox (from {self.settings.uid_base})"
                if dedicated else plan.user_label)
        return {
            "backend": self.backend.name, "level": self.backend.level, "user": user,
            "protections": plan.protections.as_dict(), "missing": plan.protections.missing(),
            "workers": self.config.worker_count(),
        }

    def describe(self) -> dict[str, Any]:
        """Backend, user, protections present and missing: for results' metadata."""
        description = {**self._description, "missing": list(self._description["missing"])}
        if self._notes:
            description["notes"] = list(self._notes)
        return description

    def note_sandbox(self, sandbox: Sandbox) -> None:
        """Facts learned when a sandbox starts (warned once, kept in describe())."""
        unreadable = sandbox.info.get("unreadable") or []
        if unreadable and not self._notes:
            note = (f"the sandbox's uid cannot read {', '.join(unreadable)}: only modules the "
                    "zygote preloaded can be imported (make the runtime world-readable, or "
                    "use the bubblewrap or unshare backend)")
            self._notes.append(note)
            warnings.warn(note, SandboxIsolationWarning, stacklevel=2)

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
                        sandbox.begin_reset()         # but it is not counted either
                    sandbox.finish_reset()
                except SandboxError:
                    pass
        return sorted({pid for sandbox in sandboxes for pid in sandbox.stray_processes()})

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # the jobs; see assay.sandbox._jobs
    def run_function(self, *args: Any, **kwargs: Any) -> Any:
        from assay.sandbox._jobs import run_function

        return run_function(self, *args, **kwargs)

    def run_test_program(self, *args: Any, **kwargs: Any) -> Any:
        from assay.sandbox._program import run_test_program

        return run_test_program(self, *args, **kwargs)

    def run_script(self, *args: Any, **kwargs: Any) -> Any:
        from assay.sandbox._jobs import run_script

        return run_script(self, *args, **kwargs)


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
        SandboxIsolationWarning, stacklevel=4,
    )


_pools: dict[Any, SandboxPool] = {}
_pools_lock = threading.Lock()


def get_pool(config: SandboxConfig | None = None) -> SandboxPool:
    """The shared pool for ``config`` (created on first use, closed at exit)."""
    config = config or SandboxConfig()
    key = (config.pool_key(), config.resolved_backend(), config.required_level())
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = SandboxPool(config.pool_key())
        return pool


_open_pools: weakref.WeakSet[SandboxPool] = weakref.WeakSet()


def shutdown_pools() -> None:
    """Close the shared pools, and at exit every pool still open (their sandboxes would
    die with us anyway; this also removes their host folders)."""
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.close()


def _close_everything() -> None:
    shutdown_pools()
    for pool in list(_open_pools):
        pool.close()


atexit.register(_close_everything)
