"""Each resource limit, the wall-clock timeout with grandchildren, on every backend."""

from __future__ import annotations

import time
from typing import Any

import pytest

from assay.sandbox import Call, FunctionRun, Limits, SandboxPool

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")
MIB = 1024 * 1024


DEFAULT = Limits()


def call(
    pool: SandboxPool, python: Any, body: str, timeout: float = 10, limits: Limits = DEFAULT
) -> FunctionRun:
    code = "def solution(x):\n" + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())
    return pool.run_function(python, code, "solution", [Call((0,))], timeout, limits)


@pytest.mark.slow
def test_cpu_time_limit(pool: SandboxPool, python: Any) -> None:
    started = time.monotonic()
    run = call(pool, python, "while True:\n    pass", timeout=20, limits=Limits(cpu_seconds=1))
    assert time.monotonic() - started < 10, "the CPU limit, not the wall clock, ended it"
    assert run.outcomes[0].status == "crashed"
    assert "CPU-time limit" in (run.outcomes[0].message or "")
    assert not run.timed_out


def test_memory_limit(pool: SandboxPool, python: Any) -> None:
    run = call(
        pool,
        python,
        """
blocks = []
try:
    while True:
        blocks.append(bytearray(16 * 1024 * 1024))
except MemoryError:
    return len(blocks) * 16""",
        limits=Limits(memory_bytes=128 * MIB),
    )
    assert run.outcomes[0].ok
    assert 32 <= run.outcomes[0].value <= 128, "stopped near the 128 MiB cap"


def test_process_limit_stops_a_fork_bomb(pool: SandboxPool, python: Any) -> None:
    run = call(
        pool,
        python,
        """
import os, time
children = 0
try:
    for _ in range(10000):
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        children += 1
except OSError as exc:
    return [children, type(exc).__name__]
return [children, None]""",
        limits=Limits(max_processes=16),
    )
    children, error = run.outcomes[0].value
    assert error == "BlockingIOError"
    assert children <= 16


def test_file_size_limit(pool: SandboxPool, python: Any) -> None:
    run = call(
        pool,
        python,
        """
with open('big.bin', 'wb') as handle:
    for _ in range(64):
        handle.write(b'x' * (1024 * 1024))
return 'wrote everything'""",
        limits=Limits(max_file_bytes=4 * MIB),
    )
    assert run.outcomes[0].status == "error"
    assert "File too large" in (run.outcomes[0].message or "")


def test_open_files_limit(pool: SandboxPool, python: Any) -> None:
    run = call(
        pool,
        python,
        """
handles = []
try:
    while True:
        handles.append(open('/dev/null'))
except OSError as exc:
    return [len(handles), exc.errno]""",
        limits=Limits(max_open_files=32),
    )
    opened, errno = run.outcomes[0].value
    assert errno == 24  # EMFILE
    assert opened < 32


def test_output_limit(pool: SandboxPool, python: Any) -> None:
    run = call(
        pool,
        python,
        """
import sys
try:
    for _ in range(1000):
        sys.stdout.write('y' * 65536)
        sys.stdout.flush()
except (BrokenPipeError, OSError):
    return 'cut off'
return 'wrote 64 MiB'""",
        limits=Limits(max_output_bytes=100_000),
    )
    assert run.output.truncated
    assert len(run.output.stdout) < 100_000 + 200
    assert run.output.stdout.endswith("[output truncated at 100000 bytes]")
    assert run.outcomes[0].value == "cut off"


@pytest.mark.slow
def test_timeout_kills_grandchildren_and_daemons(pool: SandboxPool, python: Any) -> None:
    started = time.monotonic()
    run = call(
        pool,
        python,
        """
import os, time
if os.fork() == 0:            # a daemon: new session, double fork, ignores SIGTERM/SIGHUP
    os.setsid()
    if os.fork() == 0:
        import signal
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        time.sleep(300)
    os._exit(0)
if os.fork() == 0:            # a grandchild that execs another program
    os.setsid()
    os.execvp('sleep', ['sleep', '300'])
while True:
    pass""",
        timeout=1.5,
    )
    elapsed = time.monotonic() - started
    assert run.timed_out and run.outcomes[0].status == "timeout"
    assert elapsed < 5, f"the parent enforced the deadline ({elapsed:.1f} s)"
    assert pool.stray_processes() == [], "grandchildren and daemons died with the sandbox"


def test_daemons_of_a_finished_job_are_killed(pool: SandboxPool, python: Any) -> None:
    run = call(
        pool,
        python,
        """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(300)
    os._exit(0)
return 'left a daemon behind'""",
    )
    assert run.outcomes[0].ok
    assert pool.stray_processes() == []


def test_limits_are_reported(pool: SandboxPool, python: Any) -> None:
    run = call(pool, python, "return 1", timeout=3, limits=Limits(memory_bytes=64 * MIB))
    limits = run.sandbox["limits"]
    assert limits["wall_seconds"] == 3
    assert limits["cpu_seconds"] == 4
    assert limits["memory_bytes"] == 64 * MIB
    assert run.sandbox["backend"] == pool.backend.name
