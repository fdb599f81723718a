"""A CPU quota (``SandboxConfig.cpu_quota``) caps a sandbox's jobs, not its own housekeeping:
the zygote starts, and cleans up after a job (killing what the job left spinning), with
the quota off, so neither crawls at a candidate's cap (at 5% of a CPU a start took 2.4 s,
a reset after a forking job 8 s, a pool's close 10 s). The kernel's own count of
throttled periods shows it: none while the zygote starts or resets, some while a busy job
runs. Real sandboxes in real cgroups."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from assay.sandbox import Call, Limits, SandboxConfig, SandboxPool, get_language

require_cpu_cgroups = sys.modules[
    "assay_tests_sandbox_fixtures"
].require_cpu_cgroups  # tests/_sandbox_fixtures.py

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")

QUOTA = 0.05  # CPUs: a busy job is throttled in every 100 ms period past its 5 ms
# busy processes the job leaves behind for the reset to kill, each in a session of its own
LEAVES_SPINNERS = """import os

def solution(n):
    for _ in range(n):
        if os.fork() == 0:
            os.setsid()
            while True:
                pass
    return n
"""
SPINS = "import time\n\ndef solution(seconds):\n    end = time.process_time() + seconds\n    while time.process_time() < end:\n        pass\n    return seconds\n"


@pytest.fixture(params=["bubblewrap", "unshare", "rlimit"])
def capped_pool(request: pytest.FixtureRequest) -> Iterator[SandboxPool]:
    require_cpu_cgroups()
    made = SandboxPool(SandboxConfig(backend=request.param, workers=1, cpu_quota=QUOTA))
    try:
        yield made
    finally:
        made.close()


def _throttled(pool: SandboxPool) -> int:
    """Periods the kernel throttled the pool's one sandbox so far."""
    (sandbox,) = pool.candidates.started
    assert sandbox.cgroup is not None
    counts = sandbox.cgroup.throttled()
    assert counts is not None, "this kernel counts no throttled periods"
    return counts[0]


def test_a_capped_sandbox_starts_and_resets_unthrottled_while_its_jobs_are_capped(
    capped_pool: SandboxPool,
) -> None:
    python = get_language("python")
    with capped_pool.candidates.lease():  # started: a zygote, Python's start-up and a spare
        pass
    assert _throttled(capped_pool) == 0

    before = _throttled(capped_pool)
    run = capped_pool.run_function(python, SPINS, "solution", [Call((0.05,))], 60)
    assert run.outcomes[0].status == "ok", run.outcomes[0].message
    assert _throttled(capped_pool) > before  # the job itself is held to its quota

    run = capped_pool.run_function(
        python, LEAVES_SPINNERS, "solution", [Call((8,))], 60, Limits(max_processes=20)
    )
    assert run.outcomes[0].value == 8, run.outcomes[0].message
    # the job is over and its reset under way: the 8 processes it left are killed by a
    # zygote that is not throttled beside them
    after_job = _throttled(capped_pool)
    assert capped_pool.stray_processes() == []  # waits for the reset, then looks
    assert _throttled(capped_pool) == after_job
