"""Landlock (Linux 5.13+): a process confines itself, with no privilege.

For the sandbox without namespaces of its own (the rlimit backend), as far as the
kernel's Landlock ABI goes:

- writes (ABI 1): a job still reads what its uid can read, but it cannot create, change,
  rename, link or remove anything outside the folders it is given, so it leaves nothing
  behind for the next job in the host's world-writable folders;
- TCP (ABI 4): no TCP bind or connect (other protocols, such as UDP, are not covered);
- scopes (ABI 6): no signal to a process outside the job, and no connection to an
  abstract unix socket made outside it (a host's X11 or D-Bus, for one).

The harness runs in the job's interpreter with the standard library alone, hence the
three system calls through ctypes.
"""

from __future__ import annotations

import ctypes
import os
import struct

# the same numbers on every architecture (the system calls are newer than the split)
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

_WRITE_FILE = 1 << 1
_REMOVE_DIR, _REMOVE_FILE = 1 << 4, 1 << 5
_MAKE = sum(1 << bit for bit in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
_REFER = 1 << 13  # ABI 2: links and renames between folders
_TRUNCATE = 1 << 14  # ABI 3
_BIND_TCP, _CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

_libc = ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI (0 where it has none, or has it turned off)."""
    version = _libc.syscall(
        _CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
    )
    return max(int(version), 0)


def ruleset(writable: list[str]) -> tuple[int, list[str]]:
    """A ruleset (a descriptor, closed on exec) that allows writes only beneath the
    folders of ``writable`` and to its files (such as /dev/null), and, where the ABI
    has them, refuses TCP and scopes signals and abstract sockets; with what it
    confines ("writes", "tcp", "scopes"). Built once: each process that takes it on
    with :func:`enforce` pays one system call. Raises OSError where the kernel refuses,
    so that no job runs believed confined."""
    version = abi_version()
    if version < 1:
        raise OSError("Landlock is not available")
    handled = _WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE
    handled |= (_REFER if version >= 2 else 0) | (_TRUNCATE if version >= 3 else 0)
    fields, confines = [handled], ["writes"]  # struct landlock_ruleset_attr grew a field per feature
    if version >= 4:
        fields.append(_BIND_TCP | _CONNECT_TCP)
        confines.append("tcp")
    if version >= 6:
        fields.append(_SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL)
        confines.append("scopes")
    attr = struct.pack(f"={len(fields)}Q", *fields)
    rules = _call(_CREATE_RULESET, ctypes.c_char_p(attr), ctypes.c_size_t(len(attr)), 0)
    try:
        for path in writable:
            _allow(rules, path, handled)
    except BaseException:
        os.close(rules)
        raise
    return rules, confines


def enforce(rules: int) -> None:
    """Confine this process and every process it starts by ``rules`` (which needs
    no_new_privs, or CAP_SYS_ADMIN), then close it: nothing the job runs holds it."""
    try:
        _call(_RESTRICT_SELF, rules, 0)
    finally:
        os.close(rules)


def _allow(rules: int, path: str, handled: int) -> None:
    """A folder: every handled right beneath it; a file: writing it."""
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        rights = handled if os.path.isdir(path) else handled & (_WRITE_FILE | _TRUNCATE)
        rule = struct.pack("=Qi", rights, fd)  # struct landlock_path_beneath_attr, packed
        _call(_ADD_RULE, rules, _RULE_PATH_BENEATH, ctypes.c_char_p(rule), 0)
    finally:
        os.close(fd)


def _call(number: int, *args: object) -> int:
    result = int(_libc.syscall(number, *args))
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"landlock: {os.strerror(code)}")
    return result
