"""Cleaning up after a job inside the sandbox: killing, deleting, placing descriptors."""

from __future__ import annotations

import fcntl
import os
from typing import Any

from . import proc
from .tree import remove_tree


def kill_all_and_scrub(workroot: str, scrub_dirs: list[str]) -> None:
    proc.kill_quietly(-1)
    try:
        empty_folder_contents(workroot, None)
    finally:  # a work root this uid cannot list (the zygote empties it next) stops nothing
        scrub(scrub_dirs, os.getuid())


def kill_all(_workroot: str, _scrub_dirs: list[str]) -> None:
    """As the sandbox's uid: every process of it (the files stay)."""
    proc.kill_quietly(-1)


def scrub(scrub_dirs: list[str], uid: int, deep: bool = False) -> None:
    """Remove what ``uid`` owns in each shared folder (/tmp, /dev/shm...): for the
    sandbox's dedicated uid, that is what its jobs left there. At the top level only,
    or (``deep``) also inside the folders of others, such as a world-writable folder a
    host program made there (run as root, to see into those the uid may not list)."""
    folders = list(scrub_dirs)
    while folders:
        folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid == uid:
                    remove_tree(entry.path)
                elif deep and entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)
            except OSError:
                continue


def empty_folder_contents(workroot: str, _unused: Any) -> None:
    for job in os.listdir(workroot):
        job_path = os.path.join(workroot, job)
        try:
            entries = os.listdir(job_path)
        except OSError:
            try:
                os.chmod(job_path, 0o700)
                entries = os.listdir(job_path)
            except OSError:
                continue
        for entry in entries:
            remove_tree(os.path.join(job_path, entry))


def place_descriptors(fds: list[int], targets: list[int]) -> None:
    """Move received descriptors onto fixed numbers; /dev/null on 0 (opened here: an
    open file shared with the zygote would carry its flags from job to job); close the
    rest. ``os.dup2`` leaves each target inheritable (exec roles keep them)."""
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in fds]
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    for fd, target in zip(high, targets):
        os.dup2(fd, target)
    os.closerange(max(targets) + 1, 1 << 16)
