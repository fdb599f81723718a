"""Nothing crosses jobs: SysV and POSIX IPC objects die with the job, keyrings and the
other kernel surfaces are refused by the system-call filter, and a slow cleanup is
neither counted against the next job nor allowed to hold a sandbox forever."""

from __future__ import annotations

import time

import pytest

from assay.sandbox import Call, SandboxPool, get_language

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")
PY = get_language("python")
KEY = 0x5A55A1

# SysV objects through the C library; POSIX queues through mq_open
IPC = f"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
IPC_CREAT, IPC_EXCL = 0o1000, 0o2000
def leave():
    found = {{"msg": libc.msgget({KEY}, IPC_CREAT | 0o600), "shm": libc.shmget({KEY}, 1 << 20,
             IPC_CREAT | 0o600), "sem": libc.semget({KEY}, 1, IPC_CREAT | 0o600)}}
    mq = libc.mq_open(b"/assay-leak", os.O_CREAT | os.O_RDWR, 0o600, None)
    found["mq"] = mq
    return found
def look():
    found = {{"msg": libc.msgget({KEY}, 0), "shm": libc.shmget({KEY}, 0, 0),
             "sem": libc.semget({KEY}, 0, 0),
             "mq": libc.mq_open(b"/assay-leak", os.O_RDWR, 0, None)}}
    return {{name: value >= 0 for name, value in found.items()}}
"""


def host_shm_keys() -> set[int]:
    with open("/proc/sysvipc/shm") as host:
        return {int(line.split()[0]) for line in host.readlines()[1:]}


def test_ipc_objects_do_not_survive_into_the_next_job(pool: SandboxPool) -> None:
    assert KEY not in host_shm_keys(), "left over from an earlier run: ipcrm -M 0x5a55a1"
    left = pool.run_function(PY, IPC, "leave", [Call()], timeout=10)
    assert left.outcomes[0].ok and min(left.outcomes[0].value.values()) >= 0, left.outcomes[0]
    for _ in range(3):  # the next jobs, in the same warm sandbox (one per pool here)
        seen = pool.run_function(PY, IPC, "look", [Call()], timeout=10)
        assert seen.outcomes[0].value == {"msg": False, "shm": False, "sem": False, "mq": False}
    assert KEY not in host_shm_keys()  # nothing left allocated on the host either
    assert pool.describe()["ipc"] == "a fresh IPC namespace per job"


def test_a_job_can_still_use_ipc_within_itself(pool: SandboxPool) -> None:
    code = IPC + "def both():\n    made = leave()\n    return made, look()\n"
    run = pool.run_function(PY, code, "both", [Call()], timeout=10)
    made, seen = run.outcomes[0].value
    assert min(made.values()) >= 0 and all(seen.values()), run.outcomes[0]


LINKS = """
import os
def flood(n):
    open("seed", "w").close()
    os.mkdir("d")
    for index in range(n):
        os.link("seed", f"d/{index}")
    return n
"""


@pytest.mark.slow
def test_a_slow_cleanup_never_times_out_the_next_job(pool: SandboxPool) -> None:
    started = time.monotonic()
    pool.run_function(PY, LINKS, "flood", [Call((400_000,))], timeout=60)
    for _ in range(3):
        run = pool.run_function(PY, "def f(x):\n    return x + 1\n", "f", [Call((1,))], timeout=0.5)
        assert [o.value for o in run.outcomes] == [2], run.outcomes[0].message
    assert time.monotonic() - started < 90
