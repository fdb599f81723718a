"""Compile once per content: a compiled candidate or test program built from the same
bytes (sources, toolchain, flags, harness, limits) is built by the first job that needs
it and reused by every later one (pass@k's K candidates share a test program; identical
candidates share a build; a compile error is the same error again).

The compile itself stays in the sandbox (``harness/shared_build.py``): the first job's
compile step writes its result to a file only the parent can open, before any job code
runs. The parent keeps that file as it is, in its own 0700 folder, which no sandbox
sees; a later job of the same key is handed a read-only descriptor of it (and its
digest), which its compile step reads, checks and unpacks into its own folder before any
job code runs. So a build reaches only the jobs that build the same bytes in the same
role: a candidate never sees another candidate's build, nor a test program's.

A job that finds its key being built waits for that build (bounded) rather than
compiling the same bytes beside it.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from assay.sandbox import _toolchains as toolchains
from assay.sandbox.config import Limits
from assay.sandbox.harness import shared_build

LANGUAGES = ("go", "cpp", "java")
CACHE_BYTES = 1 << 30  # builds kept at most, least recently used dropped first
WAIT_SECONDS = 120.0  # a build of the same key under way: longer than this, build beside it
VERSION_COMMANDS = {"go": ("go", "version"), "cpp": ("g++", "--version"), "java": ("javac", "--version")}
STAGING_PREFIX = "assay-builds-"  # then the pid: a later process removes a dead one's folder
LEGACY_PREFIX = "shared-"  # builds once unpacked under the toolchain cache, which sandboxes read


@dataclass
class Entry:
    path: str | None  # the compile step's export, parent-only; None for a compile error
    digest: str = ""  # SHA-256 of the export (its trailer), as the compile step checks it
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

    def descriptor(self) -> int | None:
        """What the compile step is handed (the caller closes its copy once the child
        has it): a fresh parent-only file to export this build to, once per claim (a
        second process of the job may have been preceded by job code), or the found
        build opened read-only."""
        if self.building:
            if self.staging is not None:
                return None
            try:
                fd, self.staging = tempfile.mkstemp(dir=self.builds.staging_folder(), prefix="staging-")
            except OSError:
                return None  # the folder gone (removed from outside): this build is not shared
            return fd
        if self.found is None or self.found.path is None:
            return None
        try:
            return os.open(self.found.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:  # evicted meanwhile, or removed from outside: this job compiles
            self.builds.forget(self.key, self.found)  # afresh, and the next shares its build
            return None

    def setup(self, fd: int | None, slot: int) -> dict[str, Any]:
        """The setup frame's part about it, ``fd`` being ``descriptor()``'s, numbered
        ``slot`` in the child: where to export, what to reuse, or nothing."""
        if self.found is not None and self.found.error is not None:
            return {"shared": {"error": self.found.error}}
        if fd is None:
            return {}
        if self.building:
            return {"export_fd": slot}
        assert self.found is not None
        return {"shared": {"fd": slot, "digest": self.found.digest}}

    def publish(self) -> None:
        """The compile step is past (its result complete, if it wrote one): keep it and
        let the jobs waiting for this key go on. Idempotent."""
        if not self.building:
            return
        self.building = False
        entry = self.builds.read_export(self.staging) if self.staging else None
        if entry is not None and entry.path is not None:
            self.staging = None  # the entry's now
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
        self._staging: str | None = None

    def staging_folder(self) -> str:
        """0700 and outside the toolchain cache: no sandbox sees it. Made at first use,
        when the folders that killed processes left go."""
        with self.changed:
            if self._staging is None:
                try:
                    remove_dead_folders(tempfile.gettempdir(), STAGING_PREFIX)
                    remove_dead_folders(toolchains.cache_root(), LEGACY_PREFIX)
                except Exception:  # a clean-up never fails a job
                    pass
                self._staging = tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-")
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
            elif entry is not None:
                _forget(entry)
            self.changed.notify_all()

    def forget(self, key: str, entry: Entry) -> None:
        """``entry`` no longer opens: if still the key's, the next job builds the key again."""
        with self.changed:
            if self.entries.get(key) is entry:
                del self.entries[key]
                self.stats["reused"] -= 1
                self.stats["vanished"] += 1

    def drop(self, key: str) -> None:
        with self.changed:
            entry = self.entries.pop(key, None)
            if entry is not None:
                _forget(entry)

    def _evict(self) -> None:
        while sum(e.size for e in self.entries.values()) > self.limit_bytes and len(self.entries) > 1:
            _, dropped = self.entries.popitem(last=False)
            _forget(dropped)

    def read_export(self, staging: str) -> Entry | None:
        """The compile step's export, if whole: its trailer is the SHA-256 of the rest.
        A build stays as it is, in the staging file; a compile error is kept here."""
        try:
            with open(staging, "rb") as handle:
                data = handle.read()
        except OSError:
            return None
        payload, trailer = data[:-32], data[-32:]
        if len(data) <= 33 or hashlib.sha256(payload).digest() != trailer:
            return None  # not written, or cut short (a file-size limit): nothing shared
        if payload[:1] == shared_build.FAILED:
            error = json.loads(payload[1:])
            return Entry(None, error=error, size=len(data)) if isinstance(error, dict) else None
        if payload[:1] != shared_build.BUILT:
            return None
        return Entry(staging, trailer.hex(), size=len(data))

    def close(self) -> None:
        """At the process's exit: its builds go (another process keys its own)."""
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)


def remove_dead_folders(parent: str, prefix: str) -> None:
    """``<prefix><pid>...`` folders of ours under ``parent`` whose process has ended (it
    was killed before its exit could remove them)."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        pid = _pid_in(name, prefix)
        path = os.path.join(parent, name)
        if pid is None or not _ours(path) or _alive(pid):
            continue
        shutil.rmtree(path, ignore_errors=True)


def _pid_in(name: str, prefix: str) -> int | None:
    """The pid a folder's name holds, if a plausible one: anyone may name a folder in
    /tmp (``²`` is a digit to ``isdigit``, and 10**20 no pid ``os.kill`` takes)."""
    if not name.startswith(prefix):
        return None
    digits = name[len(prefix) :].split("-", 1)[0]
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 9):
        return None
    return int(digits)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's
    return True


def _ours(path: str) -> bool:
    try:
        status = os.lstat(path)
    except OSError:
        return False
    return status.st_uid == os.geteuid() and stat.S_ISDIR(status.st_mode)


def _forget(entry: Entry) -> None:
    if entry.path is not None:
        _remove(entry.path)


def _remove(path: str) -> None:
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


def key(language: str, role: str, pool: Any, limits: Limits, *sources: Any) -> str | None:
    """The content a compile depends on, hashed; None if it is not shared: another
    language, or a ``pool`` whose sandboxes could read the parent's staging folder
    (``builds_private``). The backend too: each compiles in its own sandboxes (a compile
    error there is its own)."""
    if language not in LANGUAGES or not pool.builds_private:
        return None
    content = [
        language,
        role,
        pool.backend.name,
        toolchain_version(language),
        toolchains.compile_options(limits.memory_bytes, ""),
        harness_digest(),
        [limits.memory_bytes, limits.max_processes, limits.max_file_bytes, limits.max_value_bytes],
        [limits.cpu_seconds, limits.max_open_files],
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
