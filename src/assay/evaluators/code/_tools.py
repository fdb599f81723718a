"""Running a formatter or a linter on generated code: a subprocess with limits.

These tools parse the code as data and never execute it, so they do not need the sandbox
that runs code (which could not host them anyway: it runs a language's own roles). What a
hostile input can still do is make a parser hang or balloon, so each tool runs:

- as a subprocess, never in our interpreter;
- under ``prlimit``: CPU seconds, address space (except for Go tools, whose runtime
  reserves more address space than it uses; the Java tools run with ``JVM_FLAGS``, which
  fit in it), file size and open files bounded;
- on at most ``MAX_SOURCE_BYTES`` of code (``oversized`` says when the code is larger);
- with a wall-clock timeout, an environment of only ``PATH`` and ``LANG`` (no API key
  of ours), and a private temporary folder as its working folder, removed afterwards;
- ``confine=True``, for tools that read the files the code names (cppcheck follows
  ``#include "/any/path"``, go vet relative imports): in a bubblewrap jail that shows
  only ``/usr``, the private folder and the ``writable`` folders, with no network, so the
  code cannot make the tool read (and quote in its findings) a file of the host. Without
  bubblewrap (or where it cannot start) the tool runs unconfined and says so.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from assay.errors import ToolMissingError

__all__ = [
    "JVM_FLAGS",
    "MAX_SOURCE_BYTES",
    "TOOL_TIMEOUT",
    "ToolMissingError",
    "ToolRun",
    "oversized",
    "require_tool",
    "run_tool",
]

TOOL_TIMEOUT = 60.0
TOOL_PATH = "/usr/local/bin:/usr/bin:/bin"  # searched after PATH: where packages install tools
MEMORY_BYTES = 2 << 30
FILE_BYTES = 256 << 20
# Larger code is refused unread: no generated solution is this long, and a parser's time
# on it is not bounded by much less than the timeout.
MAX_SOURCE_BYTES = 1 << 20
# A small JVM for the Java tools, inside MEMORY_BYTES of address space (by default the JVM
# reserves a gigabyte of class space alone).
JVM_FLAGS = (
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:CICompilerCount=1",
    "-XX:-UsePerfData",
    "-Xshare:auto",
    "-XX:ReservedCodeCacheSize=32m",
    "-XX:CompressedClassSpaceSize=64m",
    "-XX:MaxMetaspaceSize=128m",
    "-Xmx384m",
    "-Xss8m",
)


@dataclass(frozen=True)
class ToolRun:
    returncode: int
    stdout: str
    stderr: str
    confined: bool = False  # ran in the bubblewrap jail


def require_tool(command: str, package: str, feature: str) -> str:
    """The tool's path, or ToolMissingError naming what to install."""
    found = shutil.which(command, path=os.environ.get("PATH", "") + ":" + TOOL_PATH)
    if found is None:
        raise ToolMissingError(f"{feature} needs {command!r}, which is not installed: {package}")
    return found


def oversized(code: str) -> str | None:
    """Why the code is too large to give to a tool, or None."""
    size = len(code.encode("utf-8", "replace"))
    if size <= MAX_SOURCE_BYTES:
        return None
    return f"the code is {size:,} bytes, more than the {MAX_SOURCE_BYTES:,} a code check reads"


def run_tool(
    argv: Sequence[str],
    stdin: str,
    *,
    files: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    limit_memory: bool = True,
    timeout: float = TOOL_TIMEOUT,
    confine: bool = False,
    writable: Sequence[str] = (),
) -> ToolRun:
    """``argv`` on ``stdin`` in a fresh temporary folder holding ``files``."""
    with tempfile.TemporaryDirectory(prefix="assay-tool-") as folder:
        jail = _jail(folder, writable) if confine else []
        for name, text in (files or {}).items():
            with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
                handle.write(text)
        try:
            done = subprocess.run(
                [*jail, *_limits(timeout, limit_memory), *argv],
                input=stdin,
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                timeout=timeout,
                cwd=folder,
                env={
                    "PATH": "/usr/local/bin:/usr/bin:/bin",
                    "LANG": "C.UTF-8",
                    "HOME": folder,
                    **(env or {}),
                },
                check=False,
            )
        except subprocess.TimeoutExpired:
            return ToolRun(-9, "", f"the tool did not finish in {timeout:g} s", bool(jail))
    return ToolRun(done.returncode, done.stdout, done.stderr, bool(jail))


def _jail(folder: str, writable: Sequence[str]) -> list[str]:
    """bubblewrap's argv for a view of ``/usr`` (merged-/usr Debian: /bin, /lib are links
    into it), the folder and ``writable``; empty when bubblewrap cannot run here."""
    bwrap = _bwrap()
    if bwrap is None:
        return []
    argv = [*_jail_base(bwrap), "--bind", folder, folder, "--chdir", folder]
    for path in writable:
        os.makedirs(path, exist_ok=True)
        argv += ["--bind", path, path]
    return [*argv, "--"]


def _jail_base(bwrap: str) -> list[str]:
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib64", "sbin"):
        if os.path.islink(f"/{name}"):
            argv += ["--symlink", os.readlink(f"/{name}"), f"/{name}"]
        elif os.path.isdir(f"/{name}"):
            argv += ["--ro-bind", f"/{name}", f"/{name}"]
    return [*argv, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]


@functools.cache
def _bwrap() -> str | None:
    """bubblewrap, if it is installed and can make its namespaces here (tried once)."""
    bwrap = shutil.which("bwrap", path="/usr/bin:/bin")
    if bwrap is None:
        return None
    try:
        probe = subprocess.run([*_jail_base(bwrap), "--", "/bin/true"], capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return bwrap if probe.returncode == 0 else None


def _limits(timeout: float, limit_memory: bool) -> list[str]:
    prlimit = shutil.which("prlimit", path="/usr/bin:/bin")
    if prlimit is None:  # util-linux is everywhere on Debian; elsewhere the timeout still holds
        return []
    limits = [prlimit, f"--cpu={max(1, int(timeout))}", f"--fsize={FILE_BYTES}", "--nofile=256"]
    if limit_memory:
        limits.append(f"--as={MEMORY_BYTES}")
    return [*limits, "--"]
