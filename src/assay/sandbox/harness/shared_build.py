"""A compile step's result shared with later jobs built from the same bytes.

The parent keys each compile by the content it depends on (the sources, the toolchain,
its flags and the job's limits: see ``sandbox/_shared_builds.py``). The first job of a
key is given a file descriptor of a parent-only file: right after compiling, before any
job code runs, the compile step writes its folder there (a tar, or the compile error),
followed by the SHA-256 of what precedes it, and closes the descriptor. The parent
keeps that file where no sandbox can see it.

A later job of the key is given a read-only descriptor of that file and its digest: it
reads the file (bounded), closes the descriptor, and unpacks the tar into its own folder
only if the digest matches; anything else (unreadable, too big, changed, a member that
would land outside the folder) means compiling afresh. A cached compile error is
reported as the compile would have reported it.
"""

from __future__ import annotations

import contextlib
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
READ_LIMIT = 1 << 30  # a shared build bigger than this is compiled afresh


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


def seal(setup: Mapping[str, object]) -> None:
    """The descriptors a setup frame names never reach an exec'd program, whichever way
    the compile step goes (a kept build may make it skip the shared one)."""
    shared = setup.get("shared")
    for fd in (setup.get("export_fd"), shared.get("fd") if isinstance(shared, dict) else None):
        if isinstance(fd, int) and _descriptor(fd):
            with contextlib.suppress(OSError):
                os.set_inheritable(fd, False)


def reuse(shared: object) -> list[str] | None:
    """The shared build unpacked into this folder, if its export has the expected
    digest: the command that runs it; else None (and nothing of it left here). Its
    descriptor is closed either way."""
    if not isinstance(shared, dict) or not _descriptor(shared.get("fd")):
        return None
    data = _read(shared["fd"])
    expected = shared.get("digest")
    if data is None or not isinstance(expected, str):
        return None
    payload = memoryview(data)[:-32]  # the trailer repeats the digest
    if hashlib.sha256(payload).hexdigest() != expected or data[:1] != BUILT:
        return None
    try:
        stream = io.BytesIO(data)  # shares the bytes: no copy
        stream.seek(1)
        with tarfile.open(fileobj=stream, mode="r:") as archive:
            _unpack(archive, payload)
        with open(ARGV, "rb") as handle:
            argv = json.loads(handle.read(1 << 16))
        os.remove(ARGV)
    except (OSError, ValueError, tarfile.TarError):
        for name in os.listdir("."):
            _remove(name)
        return None
    return [str(part).replace(CWD, os.getcwd()) for part in argv]


def _unpack(archive: tarfile.TarFile, data: memoryview) -> None:
    """Folders and regular files only, each inside this folder: no link, device, absolute
    or parent path (tarfile's own filters are missing from some Pythons we run on). A
    file's content is written from ``data``, where the archive lies."""
    for member in archive:
        name = os.path.normpath(member.name)
        if os.path.isabs(name) or name == ".." or name.startswith("../"):
            raise ValueError(f"{member.name} lies outside the job folder")
        if member.isdir():
            os.makedirs(name, 0o755, exist_ok=True)
            continue
        end = member.offset_data + member.size
        if not member.isfile() or member.sparse is not None or end > len(data):
            raise ValueError(f"{member.name} is not a regular file")
        if os.path.dirname(name):
            os.makedirs(os.path.dirname(name), 0o755, exist_ok=True)
        mode = 0o755 if member.mode & 0o100 else 0o644
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with open(os.open(name, flags, mode), "wb") as target:
            target.write(data[member.offset_data : end])


def _descriptor(fd: object) -> bool:
    """A descriptor the parent handed (0-4 are the job's streams and frames)."""
    return isinstance(fd, int) and not isinstance(fd, bool) and fd > 4


def _read(fd: int) -> bytes | None:
    """The whole export (a regular file of at most ``READ_LIMIT`` bytes), or None.
    ``fd`` is closed."""
    try:
        size = os.fstat(fd).st_size
        data = os.read(fd, size + 1) if 33 < size <= READ_LIMIT else b""
        while 0 < len(data) < size:  # a short read: rare on a regular file
            chunk = os.read(fd, size + 1 - len(data))
            if not chunk:
                break
            data += chunk
    except OSError:
        return None
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    return data if len(data) == size > 33 else None


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)
