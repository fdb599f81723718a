"""Fixtures the sandbox's tests (tests/sandbox) and the code evaluators' (tests/evaluators/code)
share: real sandboxes on every backend, a loopback TCP server, a host canary, and checks
that the host is unharmed. The root conftest registers this module as a plugin, so its
fixtures are seen everywhere; its names are ``sys.modules["assay_tests_sandbox_fixtures"]``."""

from __future__ import annotations

import os
import socket
import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from assay.sandbox import (
    Call,
    Limits,
    SandboxConfig,
    SandboxIsolationWarning,
    SandboxPool,
    get_language,
)

BACKENDS = ["bubblewrap", "unshare", "rlimit"]
ISOLATING = ["bubblewrap", "unshare"]
SECRET = "sk-assay-test-secret-3f9a1c"


@pytest.fixture(scope="session")
def secret_in_environment() -> Iterator[None]:
    """A fake API key in our environment: no sandbox may ever see it (the conftests of
    tests/sandbox and tests/evaluators/code use it for each of their tests)."""
    os.environ["ASSAY_TEST_API_KEY"] = SECRET
    yield
    os.environ.pop("ASSAY_TEST_API_KEY", None)


@pytest.fixture(scope="session")
def make_pool() -> Iterator[Callable[..., SandboxPool]]:
    made: dict[tuple[Any, ...], SandboxPool] = {}

    def get(backend: str, user_namespace: bool | None = None, workers: int = 1) -> SandboxPool:
        key = (backend, user_namespace, workers)
        if key not in made:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SandboxIsolationWarning)
                made[key] = SandboxPool(
                    SandboxConfig(backend=backend, user_namespace=user_namespace, workers=workers)
                )
        return made[key]

    yield get
    for pool in made.values():
        pool.close()


@pytest.fixture(params=BACKENDS)
def pool(request: pytest.FixtureRequest, make_pool: Callable[..., SandboxPool]) -> Iterator[SandboxPool]:
    """A pool on each backend; afterwards, nothing of the test may be left running."""
    chosen = make_pool(request.param)
    yield chosen
    assert_left_clean(chosen)


@pytest.fixture(params=ISOLATING)
def isolating_pool(
    request: pytest.FixtureRequest, make_pool: Callable[..., SandboxPool]
) -> Iterator[SandboxPool]:
    chosen = make_pool(request.param)
    yield chosen
    assert_left_clean(chosen)


def _describe(pids: list[int]) -> list[str]:
    described = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode(errors="replace")[:120]
            with open(f"/proc/{pid}/status") as handle:
                status = {k: v.strip() for k, v in (row.split(":", 1) for row in handle if ":" in row)}
            described.append(
                f"{pid} {status.get('State')} uid={status.get('Uid')} "
                f"ppid={status.get('PPid')} nspid={status.get('NSpid')} {command}"
            )
        except OSError as exc:
            described.append(f"{pid}: {exc}")
    return described


def assert_left_clean(pool: SandboxPool) -> None:
    """After a test's jobs: none of their processes is left, and the pool still runs honest code."""
    strays = pool.stray_processes()
    assert strays == [], f"processes survived the job: {_describe(strays)}"
    _assert_still_works(pool)


def _assert_still_works(pool: SandboxPool) -> None:
    run = pool.run_function(
        get_language("python"), "def f(x):\n    return x + 1\n", "f", [Call((41,))], timeout=10
    )
    assert [o.value for o in run.outcomes] == [42], "the pool no longer works"


@dataclass
class Loopback:
    """A real TCP server on 127.0.0.1 that records every connection it accepts."""

    port: int
    connections: list[Any] = field(default_factory=list)


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    state = Loopback(server.getsockname()[1])
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, addr = server.accept()
            except OSError:
                continue
            state.connections.append(addr)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield state
    stop.set()
    thread.join()
    server.close()


@dataclass
class HostCanary:
    folder: str
    path: str
    content: str

    def intact(self) -> bool:
        with open(self.path) as handle:
            return handle.read() == self.content and sorted(os.listdir(self.folder)) == ["canary.txt"]


@pytest.fixture
def canary(tmp_path: Any) -> HostCanary:
    """A host folder with one file, readable and writable by everyone: it must stay as is."""
    folder = tmp_path / "host"
    folder.mkdir()
    os.chmod(tmp_path, 0o777)
    os.chmod(folder, 0o777)
    path = folder / "canary.txt"
    path.write_text("untouched")
    os.chmod(path, 0o666)
    return HostCanary(str(folder), str(path), "untouched")


@pytest.fixture
def python() -> Any:
    return get_language("python")


@pytest.fixture
def javascript() -> Any:
    return get_language("javascript")


@pytest.fixture
def short_limits() -> Limits:
    return Limits(max_output_bytes=64 * 1024)


def require_cpu_cgroups() -> None:
    """Fail (not skip) where the sandbox cannot make CPU cgroups: the tests of CPU shares
    and quotas would otherwise prove nothing."""
    from assay.sandbox._cgroup import SandboxCgroup

    probe = SandboxCgroup.create()
    if probe is None:
        pytest.fail("this machine's CPU cgroups are not writable: run the suite as root")
    try:
        if not probe.cpu_shared:
            pytest.fail("this machine's CPU cgroups are not writable: run the suite as root")
    finally:
        probe.remove()
