"""Compile once per content: a compiled candidate or test program built from the same
bytes (sources, toolchain, flags, harness, limits) is built by the first job that needs
it and reused read-only by every later one (pass@k's K candidates share a test program;
identical candidates share a build; a compile error is the same error again).

The compile itself stays in the sandbox (``harness/shared_build.py``): the first job's
compile step writes its result to a file only the parent can open, before any job code
runs; the parent unpacks it under the toolchain cache, which every sandbox sees
read-only, and later jobs copy it from there and check its digest before running it.
Nothing else crosses from one job to the next.

A job that finds its key being built waits for that build (bounded) rather than
compiling the same bytes beside it.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from assay.sandbox import _toolchains as toolchains
from assay.sandbox._launch import SANDBOX_HARNESS_ROOT
from assay.sandbox.config import Limits
from assay.sandbox.harness import shared_build

LANGUAGES = ("go", "cpp", "java")
CACHE_BYTES = 1 << 30  # builds kept at most, least recently used dropped first
WAIT_SECONDS = 120.0  # a build of the same key under way: longer than this, build beside it
VERSION_COMMANDS = {"go": ("go", "version"), "cpp": ("g++", "--version"), "java": ("javac", "--version")}


@dataclass
class Entry:
    folder: str | None  # relative to the toolchain cache; None for a compile error
    digest: str = ""
    error: dict[str, Any] | None = None
    size: int = 0


@dataclass
class Claim:
    """One job's use of a key: ``found`` (reuse it), or ours to build and publish."""

    builds: SharedBuilds
    key: str
    found: Entry | None
    building: bool
    staging: str | None = None
    _fd: int | None = field(default=None, repr=False)

    def setup(self, harness_root: str) -> dict[str, Any]:
        """What the compile step's setup frame gets: the shared build, or nothing."""
        if self.found is None:
            return {}
        if self.found.error is not None:
            return {"shared": {"error": self.found.error}}
        base = (
            toolchains.SANDBOX_PREBUILT if harness_root == SANDBOX_HARNESS_ROOT else toolchains.cache_root()
        )
        assert self.found.folder is not None
        return {"shared": {"folder": os.path.join(base, self.found.folder), "digest": self.found.digest}}

    def export_fd(self) -> int | None:
        """A descriptor of a fresh parent-only file for the compile step's result: once
        per claim (a second process of the job may have been preceded by job code)."""
        if not self.building or self.staging is not None:
            return None
        fd, self.staging = tempfile.mkstemp(dir=self.builds.staging_folder(), prefix="staging-")
        self._fd = fd
        return fd

    def publish(self) -> None:
        """The compile step is past (its result complete, if it wrote one): store it and
        let the jobs waiting for this key go on. Idempotent."""
        if not self.building:
            return
        self.building = False
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        entry = self.builds.unpack(self.staging) if self.staging else None
        self.builds.finish(self.key, entry)

    def drop(self) -> None:
        self.builds.drop(self.key)


class SharedBuilds:
    def __init__(self, limit_bytes: int = CACHE_BYTES) -> None:
        self.limit_bytes = limit_bytes
        self.entries: OrderedDict[str, Entry] = OrderedDict()
        self.building: set[str] = set()
        self.changed = threading.Condition()
        self.stats: Counter[str] = Counter()  # "built", "reused", "error_reused"

    def folder(self) -> str:
        path = os.path.join(toolchains.cache_root(), f"shared-{os.getpid()}")
        os.makedirs(path, mode=0o755, exist_ok=True)
        return path

    @functools.cached_property
    def _staging(self) -> str:
        return tempfile.mkdtemp(prefix="assay-builds-staging-")  # 0700: no sandbox sees it

    def staging_folder(self) -> str:
        return self._staging

    @contextmanager
    def claim(self, key: str | None, wait: bool = True) -> Iterator[Claim | None]:
        """``wait``: for a build of the key under way (else compile beside it, unshared)."""
        if key is None:
            yield None
            return
        claim = self._claim(key, WAIT_SECONDS if wait else 0.0)
        try:
            yield claim
        finally:
            claim.publish()
            if claim.staging is not None:
                _remove(claim.staging)

    def _claim(self, key: str, patience: float) -> Claim:
        with self.changed:
            self.changed.wait_for(lambda: key not in self.building, patience)
            entry = self.entries.get(key)
            if entry is not None:
                self.entries.move_to_end(key)
                self.stats["reused" if entry.error is None else "error_reused"] += 1
                return Claim(self, key, entry, building=False)
            ours = key not in self.building  # else no waiting: build beside it, unshared
            if ours:
                self.building.add(key)
            return Claim(self, key, None, building=ours)

    def finish(self, key: str, entry: Entry | None) -> None:
        with self.changed:
            self.building.discard(key)
            if entry is not None and key not in self.entries:
                self.entries[key] = entry
                self.stats["built"] += 1
                self._evict()
            elif entry is not None and entry.folder:
                _remove(os.path.join(toolchains.cache_root(), entry.folder))
            self.changed.notify_all()

    def drop(self, key: str) -> None:
        with self.changed:
            entry = self.entries.pop(key, None)
            if entry is not None and entry.folder:
                _remove(os.path.join(toolchains.cache_root(), entry.folder))

    def _evict(self) -> None:
        while sum(e.size for e in self.entries.values()) > self.limit_bytes and len(self.entries) > 1:
            _, dropped = self.entries.popitem(last=False)
            if dropped.folder:
                _remove(os.path.join(toolchains.cache_root(), dropped.folder))

    def unpack(self, staging: str) -> Entry | None:
        """The compile step's export, if whole: its trailer is the SHA-256 of the rest."""
        with open(staging, "rb") as handle:
            data = handle.read()
        payload, trailer = data[:-32], data[-32:]
        if len(data) <= 33 or hashlib.sha256(payload).digest() != trailer:
            return None  # not written, or cut short (a file-size limit): nothing shared
        if payload[:1] == shared_build.FAILED:
            error = json.loads(payload[1:])
            return Entry(None, error=error) if isinstance(error, dict) else None
        target = tempfile.mkdtemp(dir=self.folder(), prefix="build-")
        try:
            with tarfile.open(fileobj=io.BytesIO(payload[1:]), mode="r:") as archive:
                archive.extractall(target, filter="data")
            _readable(target)
            digest = shared_build.digest(target)
        except (OSError, tarfile.TarError, ValueError):
            _remove(target)
            return None
        size = sum(os.path.getsize(os.path.join(r, f)) for r, _, files in os.walk(target) for f in files)
        return Entry(os.path.relpath(target, toolchains.cache_root()), digest, size=size)

    def close(self) -> None:
        """At the process's exit: its builds go (another process keys its own)."""
        shutil.rmtree(os.path.join(toolchains.cache_root(), f"shared-{os.getpid()}"), ignore_errors=True)
        if "_staging" in self.__dict__:
            shutil.rmtree(self._staging, ignore_errors=True)


def _readable(root: str) -> None:
    """Readable (and the built programs runnable) by every sandbox's user, writable by none."""
    os.chmod(root, 0o755)
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            os.chmod(os.path.join(folder, name), 0o755)
        for name in files:
            path = os.path.join(folder, name)
            os.chmod(path, 0o755 if os.stat(path).st_mode & 0o100 else 0o644)


def _remove(path: str) -> None:
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


def key(language: str, role: str, backend: str, limits: Limits, *sources: Any) -> str | None:
    """The content a compile depends on, hashed; None if it is not shared. The backend
    too: each compiles in its own sandboxes (a compile error there is its own)."""
    if language not in LANGUAGES:
        return None
    content = [
        language,
        role,
        backend,
        toolchain_version(language),
        toolchains.compile_options(limits.memory_bytes, ""),
        harness_digest(),
        [limits.memory_bytes, limits.max_processes, limits.max_file_bytes, limits.max_value_bytes],
        *sources,
    ]
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()


@functools.cache
def toolchain_version(language: str) -> str:
    command, argument = VERSION_COMMANDS[language]
    path = toolchains.tool(command)
    if path is None:
        return "missing"
    try:
        done = subprocess.run([path, argument], capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return path
    return path + "\0" + (done.stdout + done.stderr).decode(errors="replace")


@functools.cache
def harness_digest() -> str:
    """The harness's sources (the compile step, the language runtimes): a new version of
    assay never reuses an older one's builds."""
    found = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(toolchains.HARNESS)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            with open(os.path.join(folder, name), "rb") as handle:
                found.update(name.encode() + b"\0" + handle.read())
    return found.hexdigest()


BUILDS = SharedBuilds()
atexit.register(BUILDS.close)
