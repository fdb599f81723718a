"""Nothing crosses jobs: SysV IPC and POSIX message queues are refused by the
system-call filter (and die with their job where no filter loads), keyrings and the
other kernel surfaces are refused too, and a slow cleanup is neither counted against the
next job nor allowed to hold a sandbox forever."""

from __future__ import annotations

import ctypes
import errno
import os
import subprocess
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Iterator

import pytest

from assay.sandbox import (
    Call,
    SandboxConfig,
    SandboxIsolationWarning,
    SandboxPool,
    _backends,
    _pool,
    _seccomp,
    get_language,
)
from assay.sandbox._seccomp import IPC_REFUSED
from assay.sandbox.harness import landlock as harness_landlock

fixtures = sys.modules["assay_tests_sandbox_fixtures"]  # tests/_sandbox_fixtures.py
ISOLATING = fixtures.ISOLATING

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


def test_ipc_objects_are_refused_by_the_filter(pool: SandboxPool) -> None:
    assert KEY not in host_shm_keys(), "left over from an earlier run: ipcrm -M 0x5a55a1"
    code = IPC + "def errors():\n    made = leave()\n    return made, ctypes.get_errno()\n"
    made, error = pool.run_function(PY, code, "errors", [Call()], timeout=10).outcomes[0].value
    assert made == {"msg": -1, "shm": -1, "sem": -1, "mq": -1}
    assert error == errno.EPERM  # a refusal the program can report, not a kill
    seen = pool.run_function(PY, IPC, "look", [Call()], timeout=10)
    assert seen.outcomes[0].value == {"msg": False, "shm": False, "sem": False, "mq": False}
    assert KEY not in host_shm_keys()
    assert pool.describe()["ipc"] == IPC_REFUSED


SEE_SYSV = """
def keys():
    with open("/proc/sysvipc/shm") as listing:
        return [int(line.split()[0]) for line in listing.readlines()[1:]]
"""
HOST_KEY = 0x5A55A2


def test_a_job_does_not_see_the_hosts_ipc_objects(pool: SandboxPool) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    shmid = libc.shmget(HOST_KEY, 4096, 0o1600)  # IPC_CREAT | 0600: a segment of the host's
    assert shmid >= 0, os.strerror(ctypes.get_errno())
    try:
        assert HOST_KEY in host_shm_keys()
        seen = pool.run_function(PY, SEE_SYSV, "keys", [Call()], timeout=10).outcomes[0]
        assert seen.ok and HOST_KEY not in seen.value, seen
    finally:
        libc.shmctl(shmid, 0, None)  # IPC_RMID
    assert pool.describe()["ipc"] == IPC_REFUSED


@pytest.fixture(params=ISOLATING)
def unfiltered_pool(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[SandboxPool]:
    """A pool on a machine without libseccomp: no system-call filter to refuse IPC."""
    monkeypatch.setattr(_seccomp, "filter_program", lambda: None)
    monkeypatch.setattr(_pool, "filter_program", lambda: None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SandboxIsolationWarning)
        made = SandboxPool(SandboxConfig(backend=request.param, workers=1))
    try:
        yield made
    finally:
        made.close()


def test_without_the_filter_ipc_objects_die_with_their_job(unfiltered_pool: SandboxPool) -> None:
    assert KEY not in host_shm_keys(), "left over from an earlier run: ipcrm -M 0x5a55a1"
    left = unfiltered_pool.run_function(PY, IPC, "leave", [Call()], timeout=10)
    assert left.outcomes[0].ok and min(left.outcomes[0].value.values()) >= 0, left.outcomes[0]
    for _ in range(3):  # the next jobs, in the same warm sandbox (one per pool here)
        seen = unfiltered_pool.run_function(PY, IPC, "look", [Call()], timeout=10)
        assert seen.outcomes[0].value == {"msg": False, "shm": False, "sem": False, "mq": False}
    assert KEY not in host_shm_keys()  # nothing left allocated on the host either
    description = unfiltered_pool.describe()
    assert description["ipc"] == "a fresh IPC namespace per job" and description["seccomp"] is None


def test_without_the_filter_a_job_can_use_ipc_within_itself(unfiltered_pool: SandboxPool) -> None:
    code = IPC + "def both():\n    made = leave()\n    return made, look()\n"
    run = unfiltered_pool.run_function(PY, code, "both", [Call()], timeout=10)
    made, seen = run.outcomes[0].value
    assert min(made.values()) >= 0 and all(seen.values()), run.outcomes[0]
    assert unfiltered_pool.stray_processes() == []


SHM = """
import os
def leave():
    with open("/dev/shm/assay-left-behind", "w") as left:
        left.write("from the last job")
    return True
def look():
    return sorted(os.listdir("/dev/shm"))
"""


def test_shared_memory_files_do_not_survive_into_the_next_job(pool: SandboxPool) -> None:
    assert pool.run_function(PY, SHM, "leave", [Call()], timeout=10).outcomes[0].value is True
    seen = pool.run_function(PY, SHM, "look", [Call()], timeout=10).outcomes[0]
    assert seen.ok and "assay-left-behind" not in seen.value, seen


@pytest.fixture
def mqueue_mount() -> Iterator[str]:
    """A message-queue file system mounted on the host, as systemd mounts /dev/mqueue
    (in a folder every uid can reach): a plain open() there makes a POSIX queue, which
    no system-call rule sees."""
    folder = tempfile.mkdtemp(prefix="assay mqueue-", dir="/tmp")  # a space: mountinfo escapes it
    os.chmod(folder, 0o755)
    subprocess.run(["mount", "-t", "mqueue", "none", folder], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", folder], check=True)
        os.rmdir(folder)


QUEUE_FILES = """
import os
def leave(folder, name):
    try:
        os.close(os.open(os.path.join(folder, name), os.O_CREAT | os.O_RDWR, 0o600))
    except PermissionError:
        return "refused"
    return name in os.listdir(folder)
def look(folder, name):
    return name in os.listdir(folder)
"""


@pytest.mark.parametrize("landlock", [True, False], ids=["landlock", "scrub"])
def test_rlimit_leaves_no_queue_made_through_the_host_mount(
    mqueue_mount: str, landlock: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not landlock:  # the kernel without Landlock: the cleanup has to find the queue
        monkeypatch.setattr(_backends, "LANDLOCK_WRITABLE", ())
    elif harness_landlock.abi_version() < 1:
        pytest.skip("this kernel has no Landlock")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SandboxIsolationWarning)
        pool = SandboxPool(SandboxConfig(backend="rlimit", workers=1))  # made after the mount
    try:
        # the queues are the host's, whatever mount shows them: a name of this run alone
        where = (mqueue_mount, f"assay-left-queue-{uuid.uuid4().hex}")
        made = pool.run_function(PY, QUEUE_FILES, "leave", [Call(where)], timeout=10).outcomes[0]
        assert made.value == ("refused" if landlock else True), made
        seen = pool.run_function(PY, QUEUE_FILES, "look", [Call(where)], timeout=10).outcomes[0]
        assert seen.value is False, seen
    finally:
        pool.close()
    assert where[1] not in os.listdir(mqueue_mount)


# what honest code reaches for: locks and queues are POSIX semaphores in /dev/shm
MULTIPROCESSING = """
import multiprocessing
def square(x):
    return x * x
def parallel(n):
    lock, queue = multiprocessing.Lock(), multiprocessing.Queue()
    with lock:
        queue.put("locked")
    with multiprocessing.Pool(2) as pool:
        return pool.map(square, range(n)), queue.get(timeout=5)
"""


def test_multiprocessing_works_in_a_job(isolating_pool: SandboxPool) -> None:
    run = isolating_pool.run_function(PY, MULTIPROCESSING, "parallel", [Call((4,))], timeout=20)
    assert run.outcomes[0].value == ([0, 1, 4, 9], "locked"), run.outcomes[0]


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
