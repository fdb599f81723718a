"""Leasing warm sandboxes to jobs, and what a job needs of its pool (``JobHost``).

Jobs (``_jobs``, ``_program``) see a pool only through ``JobHost``, so the pool can
import them and show their real signatures.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from assay.errors import SandboxError
from assay.sandbox._sandbox import Sandbox
from assay.sandbox.config import SandboxConfig


class JobHost(Protocol):
    """The part of a ``SandboxPool`` that jobs use."""

    config: SandboxConfig
    backend: Any
    candidates: Slots
    checkers: Slots
    builds_private: bool  # the parent's own files are out of its sandboxes' reach

    def describe(self) -> dict[str, Any]: ...


# Jobs running at once, over every pool of the process: more than the CPUs can run
# only makes each one slower, and a job's deadline starts once it runs, not while it
# waits here.
_running = threading.BoundedSemaphore(max(1, os.cpu_count() or 1))


@contextmanager
def running_slot() -> Iterator[None]:
    with _running:
        yield


class Slots:
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
        if sandbox.zygote_exited():  # killed while idle: a job must not find out
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
