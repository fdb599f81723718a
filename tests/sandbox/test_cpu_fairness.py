"""Fair CPU: each sandbox has a CPU weight of its own (a cgroup), so a candidate that forks
60 busy processes slows only itself. An honest candidate run beside it keeps its verdict,
as a function (test cases) and as a test program, on the bubblewrap and the rlimit
backends. Real sandboxes, real processes."""

from __future__ import annotations

import glob
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator

import pytest

from assay.sandbox import Call, Limits, SandboxConfig, SandboxPool, get_language

require_cpu_cgroups = sys.modules[
    "assay_tests_sandbox_fixtures"
].require_cpu_cgroups  # tests/_sandbox_fixtures.py

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning"),  # rlimit says what it lacks
]

# The forker returns when told (SIGUSR1, from the test once the honest verdict is in), so
# its job ends then, not at its time limit; what it forked the sandbox's reset must stop
STOP_ON_SIGNAL = """import os, signal

class Stop(Exception):
    pass

def stop(signum, frame):
    raise Stop

signal.signal(signal.SIGUSR1, stop)
"""
FORKER = f"""{STOP_ON_SIGNAL}
def solution(n):
    for _ in range(60):
        if os.fork() == 0:
            os.setsid()  # out of the job's process group: a kill of the group misses it
            signal.signal(signal.SIGUSR1, signal.SIG_DFL)
            while True:
                pass
    try:
        while True:
            pass
    except Stop:
        return "stopped"
"""
# a second or two of CPU. Beside the forker with a fair share it took 2.9 s of wall time
# for half these steps on a shared 2-core machine, without one (one process of 62) 21 s:
# the limit sits between, three times the fair case
HONEST = "def solution(n):\n    total = 0\n    for i in range(n):\n        total += i\n    return total\n"
STEPS = 30_000_000
HONEST_TIMEOUT = 20.0
# past the honest one's limit: it is there for all of it. The test ends it sooner, once the
# honest verdict is in (_end_the_forker), so this bounds only a test that went wrong
FORKER_TIMEOUT = HONEST_TIMEOUT + 5


@pytest.fixture(scope="module", params=["bubblewrap", "rlimit"])
def pool(request: pytest.FixtureRequest) -> Iterator[SandboxPool]:
    """Each backend: the namespaces' and the plain processes' (the cgroup is the same)."""
    require_cpu_cgroups()
    made = SandboxPool(SandboxConfig(backend=request.param, workers=2, memory_cgroup=True))
    try:
        yield made
    finally:
        made.close()


def _busiest_sandbox_tasks() -> int:
    """The most processes any sandbox of this test process holds (the cgroups' own count)."""
    most = 0
    for procs in glob.glob(f"/sys/fs/cgroup/pids/assay-sandbox-{os.getpid()}-*/cgroup.procs"):
        try:
            with open(procs) as handle:
                most = max(most, sum(1 for _ in handle))
        except OSError:
            continue
    return most


def _start_forker(pool: SandboxPool, forker: str = FORKER) -> tuple[threading.Thread, threading.Event]:
    done = threading.Event()

    def run() -> None:
        try:
            pool.run_function(
                get_language("python"),
                forker,
                "solution",
                [Call((1,))],
                FORKER_TIMEOUT,
                Limits(max_processes=100),
            )
        finally:
            done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, done


def _end_the_forker(done: threading.Event) -> None:
    """Tell the forker's candidate process (the parent of its busy processes) to return:
    its job ends now rather than at its time limit, and the sandbox's reset must stop the
    60 processes it left in sessions of their own."""
    name = _busiest_sandbox()
    with open(f"/sys/fs/cgroup/pids/{name}/cgroup.procs") as handle:
        pids = [int(line) for line in handle if line.strip()]
    parents = Counter(_parent_of(pid) for pid in pids)
    candidate, children = parents.most_common(1)[0]
    assert children >= 60, parents
    os.kill(candidate, signal.SIGUSR1)
    assert done.wait(FORKER_TIMEOUT), "the forker did not return when told"


def _parent_of(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0  # gone meanwhile


def _wait_for_the_fork_bomb(done: threading.Event) -> None:
    """Until the forker's sandbox holds its 60 busy processes (an event, not a delay)."""
    ticker = threading.Event()
    while _busiest_sandbox_tasks() < 60:
        assert not done.is_set(), "the forker ended before its processes were all running"
        ticker.wait(0.05)


@pytest.mark.parametrize("mode", ["function", "program"])
def test_an_honest_candidate_keeps_its_verdict_beside_a_forking_one(pool: SandboxPool, mode: str) -> None:
    forker, done = _start_forker(pool)
    try:
        _wait_for_the_fork_bomb(done)
        python = get_language("python")
        expected = STEPS * (STEPS - 1) // 2
        if mode == "function":
            run = pool.run_function(python, HONEST, "solution", [Call((STEPS,))], HONEST_TIMEOUT)
            (outcome,) = run.outcomes
            assert outcome.status == "ok" and outcome.value == expected, (outcome.status, outcome.message)
        else:
            test = f"def check(candidate):\n    assert candidate({STEPS}) == {expected}\n"
            program = pool.run_test_program(python, HONEST, test, "solution", HONEST_TIMEOUT)
            assert program.passed, program.verdict
        assert not done.is_set()  # the forker was still running all along
        _end_the_forker(done)
    finally:
        forker.join()
    assert pool.stray_processes() == []  # and its processes were all stopped with its job
    assert _busiest_sandbox_tasks() < 60


# -- a hard quota beside the weights ------------------------------------------------------
# CPUs per sandbox: below the forker's fair share even when the machine is busy (beside
# other work its weight left it ~0.2 CPU), so that the cap, not the weights, holds it
QUOTA = 0.05
# The same 60 busy processes, each held until the last is forked: under the cap, children
# that spin at once leave the forking parent 1/60 of 5% of a CPU, and on a loaded machine
# (7 of 20 runs at load 20-100) its job's time ran out before the 60th fork
GATED_FORKER = f"""{STOP_ON_SIGNAL}
def solution(n):
    gate, opened = os.pipe()
    for _ in range(60):
        if os.fork() == 0:
            os.setsid()  # out of the job's process group: a kill of the group misses it
            signal.signal(signal.SIGUSR1, signal.SIG_DFL)
            os.close(opened)
            os.read(gate, 1)  # end of file once the parent has forked them all
            while True:
                pass
    os.close(opened)
    try:
        while True:
            pass
    except Stop:
        return "stopped"
"""


@pytest.fixture(scope="module", params=["bubblewrap", "rlimit"])
def capped_pool(request: pytest.FixtureRequest) -> Iterator[SandboxPool]:
    require_cpu_cgroups()
    made = SandboxPool(SandboxConfig(backend=request.param, workers=2, cpu_quota=QUOTA))
    try:
        yield made
    finally:
        made.close()


def _busiest_sandbox() -> str:
    """The cgroup name of the sandbox holding the most processes (the forker's)."""
    counts = {}
    for procs in glob.glob(f"/sys/fs/cgroup/pids/assay-sandbox-{os.getpid()}-*/cgroup.procs"):
        with open(procs) as handle:
            counts[os.path.basename(os.path.dirname(procs))] = sum(1 for _ in handle)
    return max(counts, key=lambda name: counts[name])


def _kernel_counts(name: str) -> tuple[float, int]:
    """(CPU seconds used, periods throttled): the kernel's accounting of one sandbox."""
    with open(f"/sys/fs/cgroup/cpuacct/{name}/cpuacct.usage") as handle:
        used = int(handle.read()) / 1e9
    with open(f"/sys/fs/cgroup/cpu/{name}/cpu.stat") as handle:
        stat = dict(line.split() for line in handle if line.strip())
    return used, int(stat["nr_throttled"])


def test_a_cpu_quota_caps_a_forking_candidate_and_its_neighbour_keeps_its_verdict(
    capped_pool: SandboxPool,
) -> None:
    """60 busy processes in a sandbox capped at 5% of a CPU use at most that, as the kernel
    counts it (an upper bound that a loaded machine only makes easier to meet); the
    kernel's throttle count says the cap is what held it; the honest one passes."""
    assert capped_pool.describe()["cpu_quota"] == QUOTA
    forker, done = _start_forker(capped_pool, GATED_FORKER)
    try:
        _wait_for_the_fork_bomb(done)
        name = _busiest_sandbox()
        began = time.monotonic()
        used_before, throttled_before = _kernel_counts(name)
        steps = STEPS // 30  # a tenth of a second of CPU: two seconds at 5%
        run = capped_pool.run_function(
            get_language("python"), HONEST, "solution", [Call((steps,))], HONEST_TIMEOUT
        )
        used_after, throttled_after = _kernel_counts(name)
        elapsed = time.monotonic() - began
        (outcome,) = run.outcomes
        assert outcome.status == "ok" and outcome.value == steps * (steps - 1) // 2, outcome.message
        assert not done.is_set()  # the forker was running all along
        _end_the_forker(done)
    finally:
        forker.join()
    used = used_after - used_before
    # slack: the readings fall between period boundaries, and each CPU may run a 5 ms
    # slice of the quota before the kernel accounts it
    print(f"forker used {used:.3f} s of CPU in {elapsed:.2f} s (cap {QUOTA * elapsed:.3f} s)")
    assert used <= QUOTA * elapsed * 1.2 + 0.05, (used, elapsed)
    assert throttled_after > throttled_before
