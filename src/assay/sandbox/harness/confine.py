"""Build the sandbox's filesystem by hand (the ``unshare`` backend; bubblewrap does this
itself): a read-only tmpfs root holding only the language runtimes, the harness, a
fresh /proc, a few device nodes and a size-capped /work; then pivot_root into it and
drop the capabilities that made it possible.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

from . import proc

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
ST_FLAGS_TO_MS = {1: MS_RDONLY, 2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC}
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41}
# the zygote keeps what it needs to set up, signal and clean up after dropped children
ZYGOTE_CAPS = (0, 1, 3, 5, 6, 7)  # CHOWN DAC_OVERRIDE FOWNER KILL SETGID SETUID

_libc = ctypes.CDLL(None, use_errno=True)


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def raw(text: str | None) -> bytes | None:
        return None if text is None else text.encode()

    if _libc.mount(raw(source), raw(target), raw(fstype), flags, raw(data)) != 0:
        error = os.strerror(ctypes.get_errno())
        raise proc.ConfinementError(f"mount {source} on {target} ({fstype}) failed: {error}")


def enter(plan: dict[str, Any]) -> None:
    root = plan["new_root"]
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    for source, target in plan["ro_binds"]:
        bind_read_only(source, root + target)
    for link, target in plan["symlinks"]:
        make_parents(root + link)
        os.symlink(target, root + link)
    for device in plan["devices"]:
        bind_device(device, root + device)
    make_dirs(root + "/proc")
    mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    make_dirs(root + plan["workroot"])
    mount(
        "tmpfs",
        root + plan["workroot"],
        "tmpfs",
        MS_NOSUID | MS_NODEV,
        f"size={plan['workdir_bytes']},mode=0755",
    )
    make_dirs(root + plan["shm"])
    mount(
        "tmpfs", root + plan["shm"], "tmpfs", MS_NOSUID | MS_NODEV, f"size={plan['workdir_bytes']},mode=1777"
    )
    mount(None, root, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    pivot_into(root)
    if plan["keep_setuid"]:
        proc.drop_all_capabilities(keep=ZYGOTE_CAPS)
    else:
        proc.drop_all_capabilities()


def make_dirs(path: str) -> None:
    os.makedirs(path, mode=0o755, exist_ok=True)


def make_parents(path: str) -> None:
    make_dirs(os.path.dirname(path))


def bind_read_only(source: str, target: str) -> None:
    if os.path.isdir(source):
        make_dirs(target)
    else:
        make_parents(target)
        open(target, "a").close()
    mount(source, target, None, MS_BIND | MS_REC)
    # a user namespace may not clear flags the source mount has (nodev, nosuid...)
    locked = 0
    for st_flag, ms_flag in ST_FLAGS_TO_MS.items():
        if os.statvfs(target).f_flag & st_flag:
            locked |= ms_flag
    mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | locked)


def bind_device(device: str, target: str) -> None:
    make_parents(target)
    open(target, "a").close()
    mount(device, target, None, MS_BIND)


def pivot_into(root: str) -> None:
    """pivot_root(".", ".") then detach the old root: the host's tree is gone from this
    mount namespace, not merely out of reach as with chroot."""
    os.chdir(root)
    number = PIVOT_ROOT.get(os.uname().machine)
    if number is None:
        os.chroot(".")
    else:
        if _libc.syscall(number, b".", b".") != 0:
            raise proc.ConfinementError(f"pivot_root failed: {os.strerror(ctypes.get_errno())}")
        if _libc.umount2(b".", MNT_DETACH) != 0:
            raise proc.ConfinementError(f"umount old root: {os.strerror(ctypes.get_errno())}")
    os.chdir("/")
