"""One memory limit that counts everything: shared anonymous and memfd mappings are
counted by the sandbox's cgroup (or, without one, by RLIMIT_AS), on every backend."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator

import pytest

from assay.sandbox import (
    Call,
    Limits,
    SandboxConfig,
    SandboxIsolationWarning,
    SandboxPool,
    get_language,
)

fixtures = sys.modules["assay_tests_sandbox_fixtures"]  # tests/_sandbox_fixtures.py
BACKENDS = fixtures.BACKENDS

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")

PY = get_language("python")
MIB = 1 << 20
LIMITS = Limits(memory_bytes=256 * MIB)

# each touches 1 GiB that RLIMIT_DATA does not count (ctypes: the zygote preloads it,
# so this runs even where the dedicated uid cannot read the runtime's extension modules)
BOMB = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
GIB, CHUNK = 1 << 30, 1 << 26
def bomb(kind):
    if kind == "memfd":
        fd = os.memfd_create("assay")
        os.ftruncate(fd, GIB)
        flags = 0x01  # MAP_SHARED
    else:
        fd, flags = -1, 0x01 | 0x20  # MAP_SHARED | MAP_ANONYMOUS
    area = libc.mmap(None, GIB, 0x3, flags, fd, 0)
    if area in (None, ctypes.c_void_p(-1).value):
        raise MemoryError(os.strerror(ctypes.get_errno()))
    for offset in range(0, GIB, CHUNK):
        ctypes.memset(area + offset, 1, CHUNK)
    return "survived"
"""
HONEST = "def f(n):\n    return len(bytearray(n))\n"


@pytest.fixture(
    params=[(b, c) for b in BACKENDS for c in (True, False)],
    ids=lambda p: f"{p[0]}-{'cgroup' if p[1] else 'rlimit_as'}",
)
def limited_pool(request: pytest.FixtureRequest) -> Iterator[SandboxPool]:
    backend, cgroup = request.param
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SandboxIsolationWarning)
        pool = SandboxPool(SandboxConfig(backend=backend, workers=1, memory_cgroup=cgroup))
    yield pool
    assert pool.stray_processes() == []
    pool.close()


@pytest.mark.parametrize("kind", ["shared anonymous", "memfd"])
def test_memory_outside_the_data_segment_is_limited(limited_pool: SandboxPool, kind: str) -> None:
    limits = Limits(memory_bytes=256 * MIB, max_file_bytes=None)  # memfd is not a file here
    run = limited_pool.run_function(PY, BOMB, "bomb", [Call((kind,))], timeout=30, limits=limits)
    assert run.load_failure is None, run.load_failure
    outcome = run.outcomes[0]
    assert outcome.status in ("crashed", "error") and outcome.value != "survived", outcome
    expected = "cgroup v1" if limited_pool.config.memory_cgroup else "RLIMIT_AS"
    assert run.sandbox["memory_limit"].startswith(expected)
    honest = limited_pool.run_function(PY, HONEST, "f", [Call((100 * MIB,))], timeout=30, limits=LIMITS)
    assert [o.value for o in honest.outcomes] == [100 * MIB], honest.outcomes[0]


def test_javascript_runs_within_the_cgroup() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SandboxIsolationWarning)
        pool = SandboxPool(SandboxConfig(backend="bubblewrap", workers=1, memory_cgroup=True))
    try:
        code = "function f(n) { return Buffer.alloc(n).length; }"
        run = pool.run_function(
            get_language("javascript"), code, "f", [Call((64 * MIB,))], timeout=20, limits=LIMITS
        )
        assert [o.value for o in run.outcomes] == [64 * MIB], run.outcomes[0]
        bomb = "function f(n) { const kept = []; for (;;) kept.push(Buffer.alloc(n).fill(1)); }"
        run = pool.run_function(
            get_language("javascript"), bomb, "f", [Call((64 * MIB,))], timeout=20, limits=LIMITS
        )
        assert run.outcomes[0].status in ("crashed", "error"), run.outcomes[0]
    finally:
        pool.close()
