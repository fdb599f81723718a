"""The rlimit backend has no file system of its own: where the kernel has Landlock, a
job's writes are confined to its sandbox's work folder, /dev/shm and /dev/null, so it cannot leave
anything for the next job in the host's world-writable folders (Ray's session folders,
for one, are 0777), while honest code that writes its own files works as before."""

from __future__ import annotations

import os
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterator

import pytest

from assay.sandbox import Call, SandboxConfig, SandboxIsolationWarning, SandboxPool, _backends, get_language
from assay.sandbox._pool import WRITES_ANYWHERE, WRITES_CONFINED
from assay.sandbox.harness import landlock

pytestmark = [
    pytest.mark.skipif(landlock.abi_version() < 1, reason="this kernel has no Landlock"),
    pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning"),
]
PY = get_language("python")

PLANT = """
import os
def plant(folder, name):
    try:
        with open(os.path.join(folder, name), "w") as planted:
            planted.write("from the last job")
    except OSError as exc:
        return type(exc).__name__
    return "written"
def look(folder, name):
    return os.path.exists(os.path.join(folder, name))
"""


@pytest.fixture
def shared_folder() -> Iterator[str]:
    """A host folder anyone may write into, owned by someone else than the sandbox's uid
    (the cleanup removes only what the sandbox's uid owns at the top of /tmp)."""
    folder = tempfile.mkdtemp(prefix="assay-world-writable-", dir="/tmp")
    os.chmod(folder, 0o1777)
    try:
        yield folder
    finally:
        for name in os.listdir(folder):
            os.unlink(os.path.join(folder, name))
        os.rmdir(folder)


@pytest.fixture
def rlimit_pool(make_pool: Callable[..., SandboxPool]) -> SandboxPool:
    return make_pool("rlimit")


@pytest.mark.parametrize("where", ["shared", "/tmp", "/var/tmp"])
def test_a_job_cannot_write_outside_its_folder(
    rlimit_pool: SandboxPool, shared_folder: str, where: str
) -> None:
    folder = shared_folder if where == "shared" else where
    name = f"assay-planted-{uuid.uuid4().hex}"
    planted = rlimit_pool.run_function(PY, PLANT, "plant", [Call((folder, name))], timeout=10).outcomes[0]
    assert planted.value == "PermissionError", planted
    seen = rlimit_pool.run_function(PY, PLANT, "look", [Call((folder, name))], timeout=10).outcomes[0]
    assert seen.value is False, seen
    assert not os.path.exists(os.path.join(folder, name))


# the modules the zygote preloaded only: a dedicated uid may not read the host's runtime
HONEST = """
import os, shutil
def work(shm_name):
    os.makedirs("out/deeper")
    with open("out/deeper/a.txt", "w") as written:
        written.write("kept")
    os.rename("out/deeper/a.txt", "out/b.txt")
    shutil.rmtree("out/deeper")
    with open(os.path.join(os.environ["TMPDIR"], "scratch"), "w") as scratch:
        scratch.write("scratch")
    with open(os.devnull, "w") as null:
        null.write("discarded")
    shm = os.path.join("/dev/shm", shm_name)  # where POSIX semaphores and shared memory live
    with open(shm, "w") as shared:
        shared.write("shared")
    os.unlink(shm)
    return sorted(os.listdir("out")), sorted(os.listdir("."))
"""


def test_honest_writes_still_work(rlimit_pool: SandboxPool) -> None:
    shm_name = f"assay-shm-{uuid.uuid4().hex}"
    done = rlimit_pool.run_function(PY, HONEST, "work", [Call((shm_name,))], timeout=30).outcomes[0]
    assert done.ok, done
    assert done.value == (["b.txt"], ["out", "scratch"])


LOOK_AT_DESCRIPTORS = """
import os
def targets():
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            found.append(os.readlink(f"/proc/self/fd/{fd}"))
        except FileNotFoundError:  # the listing's own descriptor, closed since
            pass
    return found
"""


def test_a_job_holds_no_ruleset(rlimit_pool: SandboxPool) -> None:
    held = rlimit_pool.run_function(PY, LOOK_AT_DESCRIPTORS, "targets", [Call()], timeout=10).outcomes[0]
    assert held.ok, held
    assert not [target for target in held.value if "landlock" in target], held.value


def test_the_results_say_how_writes_are_confined(
    rlimit_pool: SandboxPool, make_pool: Callable[..., SandboxPool]
) -> None:
    rlimit_pool.run_function(PY, PLANT, "look", [Call(("/tmp", "x"))], timeout=10)
    assert rlimit_pool.describe()["writes"] == WRITES_CONFINED
    isolating = make_pool("bubblewrap")
    isolating.run_function(PY, PLANT, "look", [Call(("/tmp", "x"))], timeout=10)
    assert "writes" not in isolating.describe()  # a file system of its own: nothing to confine


def test_without_landlock_the_cleanup_removes_what_a_dedicated_uid_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if os.geteuid() != 0:
        pytest.skip("a dedicated uid needs root")  # CI runs as root
    monkeypatch.setattr(_backends, "LANDLOCK_WRITABLE", ())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SandboxIsolationWarning)
        pool = SandboxPool(SandboxConfig(backend="rlimit", workers=1))
    name = f"assay-planted-{uuid.uuid4().hex}"
    try:
        planted = pool.run_function(PY, PLANT, "plant", [Call(("/tmp", name))], timeout=10).outcomes[0]
        assert planted.value == "written", planted
        seen = pool.run_function(PY, PLANT, "look", [Call(("/tmp", name))], timeout=10).outcomes[0]
        assert seen.value is False, seen
        assert pool.describe()["writes"] == WRITES_ANYWHERE
    finally:
        pool.close()
