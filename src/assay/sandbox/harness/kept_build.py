"""A compiled candidate's build, kept for the next process of the same job.

When a candidate's process ends mid-job (it exits, it crashes), a fresh process takes the
remaining calls. Compiling again for each would hold a slot for seconds per call (a Go
program that exits in every call: 10-27 s), so the first build step copies what it built
into the work root's ``build`` folder, which the reset between one job's processes keeps
(the zygote creates it, owned by the sandbox user, and empties it at the job's end).

That copy is made before any candidate code runs, and its digest (every file, and the
command that runs it) goes to the parent with ``{"event": "compiled"}``. A later build
step of the job is given that digest: it copies the kept build into its own folder,
hashes the copy, and runs it only if the digest matches; anything else (the candidate
rewrote the kept build, the folder is gone or full) means compiling again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil

FOLDER = "build"  # in the work root, beside the job folders
ARGV = "argv.json"
CWD = "{cwd}"  # the job folder in a kept command
BUILT = {"go": ("program",), "cpp": ("program",), "java": ("classes",)}


def folder() -> str:
    return os.path.join(os.path.dirname(os.getcwd()), FOLDER)


def keep(language: str, argv: list[str]) -> str | None:
    """Copy this folder's build to the kept folder; its digest, or None if it cannot be
    kept (the next process then compiles again)."""
    names = BUILT.get(language)
    if names is None or not os.path.isdir(folder()):
        return None
    command = json.dumps([part.replace(os.getcwd(), CWD) for part in argv]).encode()
    try:
        _empty(folder())
        for name in names:
            _copy(name, os.path.join(folder(), name))
        with open(os.path.join(folder(), ARGV), "wb") as handle:
            handle.write(command)
    except OSError:
        return None
    return _digest(os.getcwd(), names, command)


def reuse(language: str, expected: str) -> list[str] | None:
    """The kept build, copied into this folder, if its copy has the ``expected`` digest:
    the command that runs it; else None (and nothing of it left here)."""
    names = BUILT.get(language)
    if names is None:
        return None
    try:
        with open(os.path.join(folder(), ARGV), "rb") as handle:
            command = handle.read(1 << 16)
        for name in names:
            _copy(os.path.join(folder(), name), name)
        if _digest(os.getcwd(), names, command) != expected:
            raise ValueError("the kept build is not the one built")
        argv = json.loads(command)
    except (OSError, ValueError):
        for name in names:
            _remove(name)
        return None
    return [str(part).replace(CWD, os.getcwd()) for part in argv]


def _digest(root: str, names: tuple[str, ...], command: bytes) -> str:
    """SHA-256 over the command and every file under ``names`` (path, size, content)."""
    digest = hashlib.sha256(command)
    for name in names:
        for path in _files(os.path.join(root, name)):
            relative = os.path.relpath(path, root).encode()
            digest.update(len(relative).to_bytes(8, "big") + relative)
            digest.update(os.path.getsize(path).to_bytes(8, "big"))
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


def _files(path: str) -> list[str]:
    if os.path.islink(path):
        raise ValueError(f"{path} is a symbolic link")
    if not os.path.isdir(path):
        return [path]
    found = []
    for entry in sorted(os.listdir(path)):
        found += _files(os.path.join(path, entry))
    return found


def _copy(source: str, target: str) -> None:
    _remove(target)
    if os.path.isdir(source) and not os.path.islink(source):
        shutil.copytree(source, target, symlinks=True)
    else:
        shutil.copyfile(source, target, follow_symlinks=False)
        shutil.copymode(source, target)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


def _empty(path: str) -> None:
    for entry in os.listdir(path):
        _remove(os.path.join(path, entry))
