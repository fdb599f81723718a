"""The system-call filter, on every backend, for Python and for JavaScript (loaded
before exec): the kernel surfaces a candidate has no use for are refused."""

from __future__ import annotations

import pytest

from assay.sandbox import Call, SandboxPool, get_language

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")
PY = get_language("python")

# raw system calls (x86_64 numbers): each returns -1 with errno, or what the kernel gave
ATTEMPTS = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
CALLS = {
    "unshare(CLONE_NEWUSER)": (272, 0x10000000),
    "unshare(CLONE_NEWNS)": (272, 0x00020000),
    "io_uring_setup": (425, 8, ctypes.create_string_buffer(120)),
    "add_key": (248, b"user", b"assay", b"secret", 6, -4),
    "keyctl(get keyring)": (250, 0, -4, 0),
    "request_key": (249, b"user", b"assay", None, 0),
    "pidfd_open(1)": (434, 1, 0),
    "ptrace(attach 1)": (101, 16, 1, 0, 0),
    "bpf": (321, 0, None, 0),
    "perf_event_open": (298, ctypes.create_string_buffer(128), 0, -1, -1, 0),
    "mount": (165, b"none", b"/tmp", b"tmpfs", 0, None),
    "clone(CLONE_NEWUSER)": (56, 0x10000000 | 17, 0, 0, 0, 0),
    "userfaultfd": (323, 0),
    "kexec_load": (246, 0, 0, None, 0),
    "setxattr(user.*)": (188, b".", b"user.assay", b"kept", 4, 0),
    "fsetxattr(user.*)": (190, 0, b"user.assay", b"kept", 4, 0),
    "removexattr": (197, b".", b"user.assay"),
    "socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)": (41, 2, 1, 262),
    "socket(..., IPPROTO_MPTCP with high bits set)": (41, 2, 1, ctypes.c_long(0x100000106)),
    "setxattrat (Linux 6.13)": (463, -100, b".", 0, b"user.assay", ctypes.create_string_buffer(32), 32),
}
def attempt(_):
    results = {}
    for name, (number, *args) in CALLS.items():
        ctypes.set_errno(0)
        value = libc.syscall(number, *args)
        if value == 0 and name.startswith("clone"):
            os._exit(0)  # the child of a clone that worked
        results[name] = os.strerror(ctypes.get_errno()) if value == -1 else f"returned {value}"
    return results
"""
ALLOWED = """
import os, socket, _thread
def work(_):
    socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()  # plain TCP: only MPTCP is refused
    if os.fork() == 0:
        os._exit(7)
    _, status = os.wait()
    done = _thread.allocate_lock()
    done.acquire()
    _thread.start_new_thread(done.release, ())  # a thread: clone() without namespaces
    done.acquire()
    return os.waitstatus_to_exitcode(status), os.getpid() > 0
"""


def test_dangerous_system_calls_are_refused(pool: SandboxPool) -> None:
    run = pool.run_function(PY, ATTEMPTS, "attempt", [Call((0,))], timeout=10)
    assert run.outcomes[0].ok, run.outcomes[0]
    results = run.outcomes[0].value
    assert results == {name: "Operation not permitted" for name in results}
    assert "io_uring" in pool.describe()["seccomp"]


def test_ordinary_processes_and_threads_still_work(pool: SandboxPool) -> None:
    run = pool.run_function(PY, ALLOWED, "work", [Call((0,))], timeout=10)
    assert run.outcomes[0].value == (7, True), run.outcomes[0]


def test_javascript_runs_under_the_filter(pool: SandboxPool) -> None:
    code = (
        "const { execSync } = require('child_process');\n"
        "function f(x) { return [x * 2, execSync('echo ok').toString().trim(),\n"
        "  require('fs').readFileSync('/proc/self/status', 'utf8').match(/Seccomp:\\s+(\\d)/)[1]]; }"
    )
    run = pool.run_function(get_language("javascript"), code, "f", [Call((21,))], timeout=20)
    assert run.outcomes[0].value == [42, "ok", "2"], run.outcomes[0]


# an x32-ABI call (bit 30 of the number) from a thread that is not the main one
OTHER_ABI_IN_A_THREAD = """
import ctypes, _thread
def f():
    libc = ctypes.CDLL(None, use_errno=True)
    done = _thread.allocate_lock()
    done.acquire()
    def call():
        libc.syscall(ctypes.c_long(0x40000000 | 39))  # getpid, as x32
        done.release()
    _thread.start_new_thread(call, ())
    done.acquire(timeout=5)
    return "still running"
"""


def test_a_call_for_another_abi_ends_the_whole_process(pool: SandboxPool) -> None:
    run = pool.run_function(PY, OTHER_ABI_IN_A_THREAD, "f", [Call()], timeout=10)
    outcome = run.outcomes[0]
    assert not outcome.ok and outcome.value is None, outcome
    assert "SIGSYS" in (outcome.message or ""), outcome
