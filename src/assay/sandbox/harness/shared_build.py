"""A compile step's result shared with later jobs built from the same bytes.

The parent keys each compile by the content it depends on (the sources, the toolchain,
its flags and the job's limits: see ``sandbox/_shared_builds.py``). The first job of a
key is given a file descriptor of a parent-only file: right after compiling, before any
job code runs, the compile step writes its folder there (a tar, or the compile error),
followed by the SHA-256 of what precedes it, and closes the descriptor. The parent
keeps the tar unpacked in its cache, which every sandbox sees read-only.

A later job of the key is given that folder and its digest: it copies the folder into
its own, hashes the copy, and runs it only if the digest matches; anything else (the
folder gone, changed, unreadable) means compiling afresh. A cached compile error is
reported as the compile would have reported it.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tarfile
from collections.abc import Mapping

ARGV = "assay-argv.json"
CWD = "{cwd}"  # the job folder in a shared command
BUILT, FAILED = b"T", b"E"  # the export's first byte


def export_build(fd: int, argv: list[str]) -> None:
    """The job folder as a tar (and the command that runs it) on ``fd``, which is closed."""
    command = json.dumps([part.replace(os.getcwd(), CWD) for part in argv]).encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name in sorted(os.listdir(".")):
            archive.add(name)
        entry = tarfile.TarInfo(ARGV)
        entry.size = len(command)
        archive.addfile(entry, io.BytesIO(command))
    _send(fd, BUILT + buffer.getvalue())


def export_error(fd: int, frame: Mapping[str, object]) -> None:
    _send(fd, FAILED + json.dumps(frame).encode())


def _send(fd: int, data: bytes) -> None:
    """Best effort: a file-size limit or a full disk means the next job compiles too."""
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data + hashlib.sha256(data).digest())
    except OSError:
        pass


def reuse(shared: object) -> list[str] | None:
    """The shared build copied into this folder, if the copy has the expected digest:
    the command that runs it; else None (and nothing of it left here)."""
    if not isinstance(shared, dict):
        return None
    source, expected = shared.get("folder"), shared.get("digest")
    if not isinstance(source, str) or not isinstance(expected, str):
        return None
    try:
        for name in os.listdir(source):
            _copy(os.path.join(source, name), name)
        if digest(".") != expected:
            raise ValueError("the shared build is not the one built")
        with open(ARGV, "rb") as handle:
            argv = json.loads(handle.read(1 << 16))
        os.remove(ARGV)
    except (OSError, ValueError):
        for name in os.listdir("."):
            _remove(name)
        return None
    return [str(part).replace(CWD, os.getcwd()) for part in argv]


def digest(root: str) -> str:
    """SHA-256 over every file under ``root``: its path, whether it is executable, its
    size and its content. A symbolic link is refused."""
    found = hashlib.sha256()
    for path in _files(root, ""):
        full = os.path.join(root, path)
        executable = os.stat(full).st_mode & 0o100 != 0
        found.update(len(path).to_bytes(8, "big") + path.encode() + bytes([executable]))
        found.update(os.path.getsize(full).to_bytes(8, "big"))
        with open(full, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                found.update(block)
    return found.hexdigest()


def _files(root: str, relative: str) -> list[str]:
    path = os.path.join(root, relative) if relative else root
    if os.path.islink(path):
        raise ValueError(f"{relative} is a symbolic link")
    if not os.path.isdir(path):
        return [relative]
    found = []
    for entry in sorted(os.listdir(path)):
        found += _files(root, os.path.join(relative, entry) if relative else entry)
    return found


def _copy(source: str, target: str) -> None:
    if os.path.islink(source):
        raise ValueError(f"{source} is a symbolic link")
    if os.path.isdir(source):
        shutil.copytree(source, target, symlinks=True)
    else:
        shutil.copyfile(source, target, follow_symlinks=False)
        shutil.copymode(source, target)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)
