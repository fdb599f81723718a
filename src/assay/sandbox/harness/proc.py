"""Process controls applied inside the sandbox: prctl flags, resource limits, dropping
privileges, and killing everything a job left behind."""

from __future__ import annotations

import ctypes
import os
import resource
import signal
from typing import Any

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_CAPBSET_DROP = 24

_libc = ctypes.CDLL(None, use_errno=True)
# Typed once, in the zygote: an untyped ctypes call converts its arguments through far
# more of the interpreter, and in a fresh child every page it touches is a copy.
_libc.prctl.argtypes = (ctypes.c_int, *(ctypes.c_void_p,) * 4)
_libc.prctl.restype = ctypes.c_int
_libc.unshare.argtypes = (ctypes.c_int,)
_libc.unshare.restype = ctypes.c_int
_libc.syscall.argtypes = (ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p)  # capget, capset
_libc.syscall.restype = ctypes.c_long

# limit name -> (resource constant, meaning)
RLIMITS = {
    "cpu_seconds": resource.RLIMIT_CPU,
    "memory_bytes": resource.RLIMIT_DATA,
    "address_space_bytes": resource.RLIMIT_AS,
    "max_processes": resource.RLIMIT_NPROC,
    "max_file_bytes": resource.RLIMIT_FSIZE,
    "max_open_files": resource.RLIMIT_NOFILE,
}


class ConfinementError(RuntimeError):
    """A protection could not be put in place; the process must not run the job."""


def prctl(option: int, value: int) -> None:
    if _libc.prctl(option, value, 0, 0, 0) != 0:
        errno = ctypes.get_errno()
        raise ConfinementError(f"prctl({option}, {value}) failed: {os.strerror(errno)}")


def apply_limits(limits: dict[str, int | None], extra_processes: int = 0) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for name, value in limits.items():
        if value is None or name not in RLIMITS:
            continue
        if name == "max_processes":
            value += extra_processes
        if name == "cpu_seconds":
            # SIGXCPU at the soft limit, SIGKILL one second later if it is ignored
            resource.setrlimit(RLIMITS[name], (value, value + 1))
            continue
        resource.setrlimit(RLIMITS[name], (value, value))


def drop_privileges(uid: int | None, gid: int | None, verify: bool = False) -> None:
    """Become ``uid``/``gid`` for good (root modes). Leaving uid 0 clears every capability;
    the zygote proves that once at start (``verify``) rather than in every child. The
    no-new-privileges flag is set in the zygote and inherited."""
    if uid is not None and gid is not None:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        if os.getuid() != uid or os.geteuid() != uid:
            raise ConfinementError(f"still uid {os.getuid()} after setuid({uid})")
    if verify:
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        if uid is not None and effective_capabilities() != 0:
            raise ConfinementError("capabilities remain after dropping privileges")


def effective_capabilities() -> int:
    """Our effective capability mask, from capget(2)."""
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this pid
    data = (ctypes.c_uint32 * 6)()
    if _libc.syscall(_syscall_number("capget"), header, data) != 0:
        raise ConfinementError(f"capget failed: {os.strerror(ctypes.get_errno())}")
    return int(data[0]) | (int(data[3]) << 32)


def drop_all_capabilities(keep: tuple[int, ...] = ()) -> None:
    """Drop every capability but ``keep``: bounding set, ambient set, then the
    permitted/effective/inheritable sets via capset."""
    last_cap = int(_read("/proc/sys/kernel/cap_last_cap", "40"))
    for cap in range(last_cap + 1):
        if cap not in keep:
            _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    mask = sum(1 << cap for cap in keep)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this pid
    # two 32-bit halves of {effective, permitted, inheritable}
    data = (ctypes.c_uint32 * 6)(mask & 0xFFFFFFFF, mask & 0xFFFFFFFF, 0, mask >> 32, mask >> 32, 0)
    if _libc.syscall(_syscall_number("capset"), header, data) != 0:
        raise ConfinementError(f"capset failed: {os.strerror(ctypes.get_errno())}")
    if effective_capabilities() != mask:
        raise ConfinementError("capabilities remain after capset")


_SYSCALLS = {
    "capget": {"x86_64": 125, "aarch64": 90, "riscv64": 90, "ppc64le": 183, "s390x": 184},
    "capset": {"x86_64": 126, "aarch64": 91, "riscv64": 91, "ppc64le": 184, "s390x": 185},
}


_MACHINE = os.uname().machine


def _syscall_number(name: str) -> int:
    machine = _MACHINE
    number = _SYSCALLS[name].get(machine)
    if number is None:
        raise ConfinementError(f"no {name} syscall number known for {machine}")
    return number


def _read(path: str, default: str) -> str:
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return default


def processes_of_uid(uid: int) -> list[int]:
    """Host-visible pids owned by ``uid`` (reads /proc; racy by nature, used in loops)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid == uid:
                found.append(int(entry))
        except OSError:
            continue
    return found


def other_pids() -> list[int]:
    """Every pid in this pid namespace except ours (used when we are its init)."""
    me = os.getpid()
    return [int(e) for e in os.listdir("/proc") if e.isdigit() and int(e) != me]


def children_of(parent: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            found.append(int(entry))
    return found


def kill_quietly(pid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def describe_status(status: int) -> dict[str, Any]:
    """A wait status as plain data: exit code or signal name."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return {"signal": number, "signal_name": name}
    return {"exit_code": os.waitstatus_to_exitcode(status)}


def reset_signals() -> None:
    """Default dispositions before exec (Python ignores SIGPIPE and SIGXFSZ)."""
    for number in range(1, signal.NSIG):
        if number in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            signal.signal(number, signal.SIG_DFL)
        except (OSError, ValueError):
            continue


# -- per-job isolation: a fresh IPC namespace, a system-call filter ------------------------
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


IdMaps = tuple[tuple[str, bytes], ...]


def id_map_writes(uid: int, gid: int) -> IdMaps:
    """What a fresh user namespace needs written to map exactly ``uid`` and ``gid``."""
    return (
        ("/proc/self/uid_map", f"{uid} {uid} 1".encode()),
        ("/proc/self/setgroups", b"deny"),
        ("/proc/self/gid_map", f"{gid} {gid} 1".encode()),
    )


def private_ipc_namespace() -> bool:
    """Leave the host's IPC namespace for one of our own, where privileged (the rlimit
    backend as root: no user namespace needed). Whether we did."""
    return os.geteuid() == 0 and _libc.unshare(CLONE_NEWIPC) == 0


def fresh_ipc_namespace(id_maps: IdMaps | None = None) -> None:
    """A new IPC namespace (SysV queues, semaphores, shared memory; POSIX queues) for
    this process alone, gone with it. Unprivileged, so inside a new user namespace that
    maps only our own uid and gid (``id_maps``, made ahead by the zygote for the uid its
    children run as); the capabilities it grants there are cleared at once. Raw
    descriptors and one capset: this runs in every child, where each page touched is a
    copy."""
    if id_maps is None:
        id_maps = id_map_writes(os.geteuid(), os.getegid())
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWIPC) != 0:
        raise ConfinementError(f"unshare(IPC) failed: {os.strerror(ctypes.get_errno())}")
    dumpable = _libc.prctl(3, 0, 0, 0, 0)  # PR_GET_DUMPABLE: /proc/self is ours only if set
    _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    try:
        for path, content in id_maps:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, content)
            finally:
                os.close(fd)
    finally:
        _libc.prctl(PR_SET_DUMPABLE, 1 if dumpable == 1 else 0, 0, 0, 0)
    clear_capabilities()


_NO_CAPS = (ctypes.c_uint32 * 6)()


def clear_capabilities() -> None:
    """Empty effective, permitted and inheritable sets (and ambient): with no permitted
    capability and no-new-privileges, none can come back."""
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    if _libc.syscall(_syscall_number("capset"), header, _NO_CAPS) != 0:
        raise ConfinementError(f"capset failed: {os.strerror(ctypes.get_errno())}")


class SeccompProgram:
    """A BPF program compiled by libseccomp, as ``prctl`` takes it."""

    def __init__(self, program: bytes) -> None:
        if not program or len(program) % 8:
            raise ConfinementError("malformed seccomp program")
        self._buffer = ctypes.create_string_buffer(program, len(program))
        self._fprog = _SockFprog(len(program) // 8, ctypes.cast(self._buffer, ctypes.c_void_p))
        self._pointer = ctypes.byref(self._fprog)

    def load(self) -> None:
        if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, self._pointer, 0, 0) != 0:
            raise ConfinementError(f"seccomp failed: {os.strerror(ctypes.get_errno())}")


class _Sigaction(ctypes.Structure):
    """glibc's ``struct sigaction`` (x86_64 and aarch64 layouts agree)."""

    _fields_ = [
        ("handler", ctypes.c_void_p),
        ("mask", ctypes.c_ulong * (1024 // (8 * ctypes.sizeof(ctypes.c_ulong)))),
        ("flags", ctypes.c_int),
        ("restorer", ctypes.c_void_p),
    ]


SA_NOCLDSTOP = 1


def no_stop_notifications() -> None:
    """Add SA_NOCLDSTOP to the SIGCHLD handler Python installed (its ``signal`` module
    sets no flags): a child that is stopped or continued then sends no SIGCHLD."""
    action = _Sigaction()
    if _libc.sigaction(signal.SIGCHLD, None, ctypes.byref(action)) != 0:
        raise ConfinementError(f"sigaction failed: {os.strerror(ctypes.get_errno())}")
    action.flags |= SA_NOCLDSTOP
    if _libc.sigaction(signal.SIGCHLD, ctypes.byref(action), None) != 0:
        raise ConfinementError(f"sigaction failed: {os.strerror(ctypes.get_errno())}")


def load_seccomp(program: bytes) -> None:
    """Install a BPF filter compiled by libseccomp in the trusted parent (this
    interpreter may have no bindings). Needs no-new-privileges, set in the zygote."""
    SeccompProgram(program).load()


def release_free_heap() -> None:
    """Give the C heap's free pages back to the system (glibc's malloc_trim; nothing
    elsewhere): a page not resident is one fewer for each fork to share and each exit
    to release."""
    trim = getattr(_libc, "malloc_trim", None)
    if trim is not None:
        trim.argtypes = (ctypes.c_size_t,)
        trim.restype = ctypes.c_int
        trim(0)


def unprotect_from_oom() -> None:
    """The zygote is shielded from the cgroup's OOM killer; its children are not."""
    try:  # raw descriptors: a text file's objects would be page copies in every child
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
    except OSError:
        return
    try:
        os.write(fd, b"0")
    except OSError:
        pass
    finally:
        os.close(fd)
