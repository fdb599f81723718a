"""The rlimit backend has no namespaces of its own: where the kernel has Landlock, a
job's writes are confined to its sandbox's work folder, /dev/shm (as root) and
/dev/null, so it cannot leave anything for the next job in the host's world-writable
folders (Ray's session folders, for one, are 0777), while honest code that writes its
own files works as before; with ABI 4, TCP is refused; with ABI 6, signals and
abstract unix sockets stay within the job."""

from __future__ import annotations

import os
import socket
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterator

import pytest

from assay.sandbox import Call, SandboxConfig, SandboxIsolationWarning, SandboxPool, _backends, get_language
from assay.sandbox._pool import SCOPED, TCP_REFUSED, WRITES_ANYWHERE, WRITES_CONFINED, WRITES_CONFINED_OWN_UID
from assay.sandbox.harness import landlock
from assay.sandbox.harness.tree import remove_tree

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


@pytest.mark.skipif(os.geteuid() != 0, reason="/dev/shm is writable with a dedicated uid only")
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
    described = rlimit_pool.describe()
    assert described["writes"] == (WRITES_CONFINED if os.geteuid() == 0 else WRITES_CONFINED_OWN_UID)
    assert described.get("network") == (TCP_REFUSED if landlock.abi_version() >= 4 else None)
    assert described.get("scopes") == (SCOPED if landlock.abi_version() >= 6 else None)
    isolating = make_pool("bubblewrap")
    isolating.run_function(PY, PLANT, "look", [Call(("/tmp", "x"))], timeout=10)
    assert not {"writes", "network", "scopes"} & set(isolating.describe())  # namespaces instead


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


NETWORK = """
import socket
def tcp(port):
    tried = []
    for attempt in ("connect", "bind"):
        try:
            with socket.socket() as sock:
                sock.settimeout(2)
                if attempt == "connect":
                    sock.connect((b"127.0.0.1", port))
                else:
                    sock.bind((b"127.0.0.1", 0))
                    sock.listen()
            tried.append("done")
        except OSError as exc:
            tried.append(type(exc).__name__)
    return tried
def pair():
    left, right = socket.socketpair()
    left.sendall(b"local")
    return right.recv(5).decode()
"""


@pytest.mark.skipif(landlock.abi_version() < 4, reason="TCP rules need Landlock ABI 4")
def test_tcp_is_refused_and_local_sockets_work(rlimit_pool: SandboxPool) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(0.5)
        port = server.getsockname()[1]
        tried = rlimit_pool.run_function(PY, NETWORK, "tcp", [Call((port,))], timeout=10).outcomes[0]
        assert tried.value == ["PermissionError", "PermissionError"], tried
        with pytest.raises(TimeoutError):
            server.accept()  # nothing came through
    local = rlimit_pool.run_function(PY, NETWORK, "pair", [Call()], timeout=10).outcomes[0]
    assert local.value == "local", local


ABSTRACT = """
import socket
def reach(name):
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(name)
    except OSError as exc:
        return type(exc).__name__
    return "connected"
"""


@pytest.mark.skipif(landlock.abi_version() < 6, reason="scopes need Landlock ABI 6")
def test_abstract_sockets_outside_the_job_are_out_of_reach(rlimit_pool: SandboxPool) -> None:
    """A host service on an abstract socket, which no file permission guards (signals
    to the sandbox's own uid outside the job: in test_unprivileged.py, where the job
    runs as the test's uid)."""
    name = b"\0assay-abstract-" + uuid.uuid4().hex.encode()
    with socket.socket(socket.AF_UNIX) as service:
        service.bind(name)
        service.listen()
        reached = rlimit_pool.run_function(PY, ABSTRACT, "reach", [Call((name,))], timeout=10).outcomes[0]
    assert reached.value == "PermissionError", reached


@pytest.fixture(params=[0o1777, 0o1733], ids=["listable", "write-only"])
def foreign_shm_folder(request: pytest.FixtureRequest) -> Iterator[str]:
    """A folder in /dev/shm that a host program (here: root) made writable by anyone,
    and perhaps listable by no one else."""
    folder = tempfile.mkdtemp(prefix="assay-foreign-", dir="/dev/shm")
    os.chmod(folder, request.param)
    try:
        yield folder
    finally:
        remove_tree(folder)


@pytest.mark.skipif(os.geteuid() != 0, reason="a dedicated uid needs root")
def test_files_in_a_foreign_folder_of_dev_shm_are_removed(
    rlimit_pool: SandboxPool, foreign_shm_folder: str
) -> None:
    name = f"assay-planted-{uuid.uuid4().hex}"
    planted = rlimit_pool.run_function(PY, PLANT, "plant", [Call((foreign_shm_folder, name))], timeout=10)
    assert planted.outcomes[0].value == "written", planted.outcomes[0]  # /dev/shm is writable
    seen = rlimit_pool.run_function(PY, PLANT, "look", [Call((foreign_shm_folder, name))], timeout=10)
    assert seen.outcomes[0].value is False, seen.outcomes[0]
