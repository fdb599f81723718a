"""The zygote sleeps while a job runs: it wakes for its own children's exits (SIGCHLD)
and nothing else a job can cause, such as stopping and continuing its own process."""

from __future__ import annotations

import pytest

from assay.sandbox import Call, SandboxPool, get_language
from assay.sandbox._sandbox import Sandbox

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")
PY = get_language("python")
CYCLES = 300

# a helper process stops and continues the job's main process (the zygote's child)
STOP_AND_GO = f"""
import os, signal, time
def flood():
    main = os.getpid()
    helper = os.fork()
    if helper == 0:
        for _ in range({CYCLES}):  # paced: signals sent faster would merge into fewer
            os.kill(main, signal.SIGSTOP)
            time.sleep(0.0005)
            os.kill(main, signal.SIGCONT)
            time.sleep(0.0005)
        os._exit(0)
    _, status = os.waitpid(helper, 0)
    return os.waitstatus_to_exitcode(status)
"""


def _switches(pid: int) -> int:
    """Times the process gave up its CPU to wait (each wake-up from ``select`` is one)."""
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("voluntary_ctxt_switches"))


def _candidate_sandbox(pool: SandboxPool) -> Sandbox:
    (sandbox,) = [s for s in pool.candidates.started if not s.dead]
    return sandbox


def test_a_job_stopping_its_own_process_does_not_wake_the_zygote(pool: SandboxPool) -> None:
    pool.run_function(PY, "def f():\n    return 1\n", "f", [Call()], timeout=10)
    zygote = _candidate_sandbox(pool).zygote_pid
    before = _switches(zygote)
    run = pool.run_function(PY, STOP_AND_GO, "flood", [Call()], timeout=30)
    woken = _switches(zygote) - before
    assert run.outcomes[0].value == 0, run.outcomes[0]
    # a handful for the job's own messages (spawn, its exit, the cleanup); one per stop
    # and per continue before SA_NOCLDSTOP, i.e. thousands
    assert woken < 60, f"the zygote woke {woken} times for {CYCLES} stops and continues"
