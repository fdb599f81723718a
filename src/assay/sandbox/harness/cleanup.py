"""Cleaning up after a job inside the sandbox: killing, deleting, placing descriptors."""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
from typing import Any

from . import proc


def kill_all_and_scrub(workroot: str, scrub_dirs: list[str]) -> None:
    proc.kill_quietly(-1)
    try:
        empty_folder_contents(workroot, None)
    finally:  # a work root this uid cannot list (the zygote empties it next) stops nothing
        scrub(scrub_dirs)


def scrub(scrub_dirs: list[str]) -> None:
    """Remove what our uid owns at the top of each shared folder (/tmp, /dev/shm...):
    run as the sandbox's dedicated uid, that is what its jobs left there."""
    uid = os.getuid()
    for folder in scrub_dirs:
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            path = os.path.join(folder, entry)
            try:
                if os.lstat(path).st_uid == uid:
                    force_remove(path)
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
            force_remove(os.path.join(job_path, entry))


def force_remove(path: str) -> None:
    """Remove a file or tree even where the job took away its own permissions."""

    def retry(function: Any, failed: str, _info: Any) -> None:
        try:
            os.chmod(os.path.dirname(failed), 0o700)
            if os.path.isdir(failed) and not os.path.islink(failed):
                os.chmod(failed, 0o700)
            function(failed)
        except OSError:
            pass

    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            os.chmod(path, 0o700)
            shutil.rmtree(path, onerror=retry)
        else:
            os.unlink(path)
    except OSError:
        pass


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
