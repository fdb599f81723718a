"""The sandbox's system-call filter, compiled once in the trusted parent by libseccomp.

The sandboxed interpreter may be another Python (no site-packages) or Node.js, so the
parent compiles the filter to BPF with the maintained libseccomp bindings (``pyseccomp``,
or the ``seccomp`` module of libseccomp itself) and each child installs those bytes with
one ``prctl``. The sandbox's zygote loads it on itself, once, before it forks any job:
every child inherits it, and a load costs ~120-190 us of kernel work (the filter's JIT),
which a per-job load would pay every time. Everything else is allowed: the filter
removes the kernel surfaces a candidate has no use for and that escapes or cross-job
state go through. Calls made for another ABI (i386, x32) kill the process.
"""

from __future__ import annotations

import errno
import functools
import tempfile
from typing import Any

# denied with EPERM (programs handle a refusal; a kill would hide the reason)
DENIED = (
    # namespaces: a new user namespace is the door to most kernel attack surface
    "unshare",
    "setns",
    # filesystems and mounts
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "open_by_handle_at",
    "name_to_handle_at",
    "swapon",
    "swapoff",
    "quotactl",
    # other processes
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_open",
    "pidfd_getfd",
    "kcmp",
    # kernel programs and performance counters
    "bpf",
    "perf_event_open",
    "userfaultfd",
    # io_uring bypasses this filter for the calls it makes
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    # keyrings are shared by every process of a uid, across jobs and pools
    "keyctl",
    "add_key",
    "request_key",
    # SysV IPC and POSIX message queues: kernel objects that outlive the process and
    # are shared by every job of the sandbox's IPC namespace (/dev/shm is a folder,
    # emptied by each cleanup)
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    # extended attributes: a user.* attribute on any host file or folder the uid may
    # write carries data from job to job, and Landlock's write rules do not see them
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "setxattrat",
    "removexattrat",
    # the machine itself
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "acct",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "syslog",
    "vhangup",
    "lookup_dcookie",
)
IPPROTO_MPTCP = 262
# calls added since Linux 5.1 have one number on every architecture: for those the
# installed libseccomp may not know by name yet
UNIFIED_NUMBERS = {"setxattrat": 463, "removexattrat": 464}
# CLONE_NEWUSER, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWPID, NEWNET, NEWTIME
NAMESPACE_FLAGS = (
    0x10000000,
    0x00020000,
    0x02000000,
    0x04000000,
    0x08000000,
    0x20000000,
    0x40000000,
    0x00000080,
)


def _bindings() -> Any:
    try:
        import seccomp  # libseccomp's own (python3-seccomp)
    except ImportError:
        import pyseccomp as seccomp  # ctypes, same API
    return seccomp


@functools.lru_cache(maxsize=1)
def filter_program() -> bytes | None:
    """The BPF program, or None where libseccomp or its bindings are missing."""
    try:
        seccomp = _bindings()
        rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
        # a call for another ABI ends the whole process (libseccomp's default: the thread)
        rules.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
        refuse = seccomp.ERRNO(errno.EPERM)
        for name in DENIED:
            try:
                rules.add_rule(refuse, name)
            except (OSError, ValueError, RuntimeError):
                if name not in UNIFIED_NUMBERS:
                    continue  # a call this architecture does not have
                rules.add_rule(refuse, UNIFIED_NUMBERS[name])  # newer than this libseccomp
        # clone() creating namespaces; clone3 passes its flags in memory a filter cannot
        # read, so it is refused with ENOSYS and the C libraries fall back to clone()
        for flag in NAMESPACE_FLAGS:
            rules.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
        # Multipath TCP: falls back to plain TCP, where Landlock's TCP rules see only
        # IPPROTO_TCP sockets (the kernel reads the argument's low 32 bits only)
        rules.add_rule(refuse, "socket", seccomp.Arg(2, seccomp.MASKED_EQ, 0xFFFFFFFF, IPPROTO_MPTCP))
        with tempfile.TemporaryFile() as handle:
            rules.export_bpf(handle)
            handle.seek(0)
            return handle.read()
    except Exception:  # noqa: BLE001 - no libseccomp here: recorded as missing
        return None


DESCRIPTION = (
    "seccomp: new namespaces, mounts, ptrace, bpf, perf_event_open, io_uring, "
    "keyrings, SysV IPC, POSIX message queues, pidfd_open, extended attribute writes, "
    "Multipath TCP, kernel modules and kexec refused"
)
IPC_REFUSED = "SysV IPC and POSIX message queues refused by the system-call filter"
