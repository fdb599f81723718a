"""Dedicated host uids for sandboxes when we run as root.

Each sandbox gets a uid nobody else uses, claimed with an exclusive lock file, so the
process limit counts only its own processes and "kill every process of this uid" kills
exactly the sandbox's processes, in this assay process or any other.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from dataclasses import dataclass

from assay.errors import SandboxUnavailableError

SPAN = 4096


@dataclass
class UidLease:
    uid: int
    _fd: int

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def lock_folder() -> str:
    folder = os.path.join(tempfile.gettempdir(), "assay-sandbox-uids")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    return folder


def lease_uid(base: int) -> UidLease:
    folder = lock_folder()
    for uid in range(base, base + SPAN):
        fd = os.open(os.path.join(folder, str(uid)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        if _has_processes(uid):  # left over from a crashed run: do not share it
            os.close(fd)
            continue
        return UidLease(uid, fd)
    raise SandboxUnavailableError(f"no free sandbox uid in [{base}, {base + SPAN})")


def _has_processes(uid: int) -> bool:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    return True
            except OSError:
                continue
    return False
