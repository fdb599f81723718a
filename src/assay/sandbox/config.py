"""Sandbox settings: resource limits per job, and the choice of backend per pool."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

from assay.errors import SandboxUnavailableError

__all__ = ["BACKEND_ENV", "BACKEND_LEVELS", "Limits", "MIB", "MIN_LEVEL_ENV", "SandboxConfig"]


MIB = 1024 * 1024

#: strongest first; a higher level offers at least the protections of a lower one
BACKEND_LEVELS = {"bubblewrap": 3, "unshare": 2, "rlimit": 1}
BACKEND_ENV = "ASSAY_SANDBOX_BACKEND"
MIN_LEVEL_ENV = "ASSAY_SANDBOX_MIN_LEVEL"


@dataclass(frozen=True)
class Limits:
    """Per-process limits inside the sandbox (``None`` leaves one unset).

    ``cpu_seconds=None`` means the job's wall-clock timeout plus one second.
    ``memory_bytes`` caps the data segment (RLIMIT_DATA: heap and private mappings),
    which, unlike an address-space cap, lets V8 reserve its virtual ranges.
    """

    cpu_seconds: int | None = None
    memory_bytes: int | None = 512 * MIB
    max_processes: int | None = 64
    max_file_bytes: int | None = 16 * MIB
    max_open_files: int | None = 256
    max_output_bytes: int = 1 * MIB
    max_value_bytes: int = 4 * MIB  # one encoded return value (or verdict), as JSON

    def for_timeout(self, timeout: float) -> dict[str, int | None]:
        """The rlimits sent with each spawn."""
        cpu = self.cpu_seconds if self.cpu_seconds is not None else int(timeout) + 1
        return {
            "cpu_seconds": max(1, cpu),
            "memory_bytes": self.memory_bytes,
            "max_processes": self.max_processes,
            "max_file_bytes": self.max_file_bytes,
            "max_open_files": self.max_open_files,
        }

    def describe(self, timeout: float) -> dict[str, Any]:
        return {
            "wall_seconds": timeout,
            **self.for_timeout(timeout),
            "max_output_bytes": self.max_output_bytes,
            "max_value_bytes": self.max_value_bytes,
        }


@dataclass(frozen=True)
class SandboxConfig:
    """How sandboxes are made. Jobs with equal configs share one pool of warm sandboxes.

    backend: ``"auto"`` (strongest available) or ``"bubblewrap"``, ``"unshare"``,
        ``"rlimit"``; the ``ASSAY_SANDBOX_BACKEND`` variable overrides ``"auto"``.
    min_level: refuse to run below this backend's level (``ASSAY_SANDBOX_MIN_LEVEL``
        can raise it, never lower it).
    workers: warm sandboxes per pool (default: the number of CPUs).
    user_namespace: run as uid 65534 inside a user namespace. ``None`` chooses: not when
        running as root, where each sandbox gets a dedicated unprivileged host uid instead.
    reuse_checker: keep a Python test-program process alive between jobs (namespace
        backends only; see ``_resident``). Candidates always get a fresh process.
    memory_cgroup: limit each sandbox's memory and processes with a cgroup (counts
        shared and memfd memory too). ``None``: where the cgroup file system is writable
        (root); ``False``: never (then RLIMIT_AS for Python); ``True``: required.
    cpu_quota: a hard cap on each sandbox's CPU, in CPUs (``0.5``: half of one core per
        period), beside the equal weights every sandbox has: the kernel throttles a
        sandbox that used its quota until the next period, even when cores are idle.
        ``None`` (default): weights only. Needs the cgroup (as ``memory_cgroup=True``).
    """

    backend: str = "auto"
    min_level: str | None = None
    limits: Limits = field(default_factory=Limits)
    workers: int | None = None
    user_namespace: bool | None = None
    workdir_bytes: int = 64 * MIB
    node: str | None = None
    extra_ro_paths: tuple[str, ...] = ()
    uid_base: int = 1_900_000_000
    reuse_checker: bool = True
    memory_cgroup: bool | None = None
    cpu_quota: float | None = None

    def __post_init__(self) -> None:
        if self.cpu_quota is not None and not (
            isinstance(self.cpu_quota, (int, float)) and 0.01 <= self.cpu_quota <= 1024
        ):
            raise ValueError(f"cpu_quota must be a number of CPUs from 0.01 to 1024, got {self.cpu_quota!r}")
        for name in (self.backend, self.min_level):
            if name is not None and name != "auto" and name not in BACKEND_LEVELS:
                known = ", ".join(["auto", *BACKEND_LEVELS])
                raise ValueError(f"unknown sandbox backend {name!r}; known: {known}")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be at least 1, got {self.workers}")

    def resolved_backend(self) -> str:
        if self.backend != "auto":
            return self.backend
        return os.environ.get(BACKEND_ENV, "").strip() or "auto"

    def required_level(self) -> int:
        levels = [BACKEND_LEVELS[self.min_level]] if self.min_level else []
        from_env = os.environ.get(MIN_LEVEL_ENV, "").strip()
        if from_env:
            if from_env not in BACKEND_LEVELS:
                raise SandboxUnavailableError(
                    f"{MIN_LEVEL_ENV}={from_env!r} is not a backend name ({', '.join(BACKEND_LEVELS)})"
                )
            levels.append(BACKEND_LEVELS[from_env])
        return max(levels, default=0)

    def worker_count(self) -> int:
        return self.workers or os.cpu_count() or 1

    def pool_key(self) -> SandboxConfig:
        """Limits are per job; everything else shapes the sandbox itself."""
        return replace(self, limits=Limits())
