"""The spare: each zygote forks and confines the next job's process ahead of demand,
after the previous job's cleanup. It must be exactly as fresh as a process forked on
request: used by one job, made after everything of the last job is gone, under the system-call
filter, and replaced by a fork when it is missing."""

from __future__ import annotations

import os
import signal
import time

import pytest

from assay.sandbox import Call, SandboxPool, get_language
from assay.sandbox import _procfs as procfs
from assay.sandbox._sandbox import Sandbox

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")
PY = get_language("python")
WHO = """
import os
def who():
    visible = sorted(int(e) for e in os.listdir("/proc") if e.isdigit())
    with open("/proc/self/status") as status:
        seccomp = [line.split()[1] for line in status if line.startswith("Seccomp:")][0]
    return os.getpid(), seccomp, visible
"""


def who(pool: SandboxPool) -> tuple[int, str, list[int]]:
    run = pool.run_function(PY, WHO, "who", [Call()], timeout=10)
    assert run.outcomes[0].ok, run.outcomes[0]
    pid, seccomp, visible = run.outcomes[0].value
    return pid, seccomp, visible


def idle_candidate_sandbox(pool: SandboxPool) -> Sandbox:
    """The pool's one candidate sandbox, its cleanup finished (which names the spare)."""
    (sandbox,) = [s for s in pool.candidates.started if not s.dead]
    sandbox.finish_reset()
    return sandbox


def test_each_job_runs_in_the_spare_made_after_the_last_cleanup(pool: SandboxPool) -> None:
    who(pool)
    for _ in range(3):
        sandbox = idle_candidate_sandbox(pool)
        assert sandbox.spare is not None
        pid, seccomp, _ = who(pool)
        assert pid == sandbox.spare, "the job ran in the process forked ahead of it"
        assert seccomp == "2", "the filter the zygote loaded came with the fork"  # 2: filter mode


def test_a_job_sees_no_other_process_in_its_sandbox(isolating_pool: SandboxPool) -> None:
    """The spare is forked only once the job's processes are all gone: a job can
    neither see nor signal the process the next job will run in."""
    for _ in range(3):
        pid, _, visible = who(isolating_pool)
        assert visible == sorted({1, pid}), visible  # the zygote (PID 1) and itself


def test_a_spare_that_died_is_replaced_by_a_fork_on_request(pool: SandboxPool) -> None:
    who(pool)
    sandbox = idle_candidate_sandbox(pool)
    killed = sandbox.spare
    (host_pid,) = procfs.children_of(sandbox.zygote_pid)  # between jobs, only the spare
    os.kill(host_pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while not procfs.is_zombie(host_pid) and procfs.alive(host_pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    pid, _, _ = who(pool)  # unreaped, the dead spare's pid cannot be reused yet
    assert pid != killed, "the job ran in a child forked on request"
    spare = idle_candidate_sandbox(pool).spare
    assert spare is not None and who(pool)[0] == spare, "and the next cleanup makes a new spare"


def test_the_spare_is_no_stray_and_leaves_with_its_sandbox(pool: SandboxPool) -> None:
    who(pool)
    sandbox = idle_candidate_sandbox(pool)
    (host_pid,) = procfs.children_of(sandbox.zygote_pid)
    assert pool.stray_processes() == []  # waiting for a job is not surviving one
    sandbox.kill()
    assert not procfs.alive(host_pid) or procfs.is_zombie(host_pid)
    who(pool)  # a new sandbox takes the slot


FOLDER = """
import os
def look(crash):
    names = [os.getcwd(), os.environ["HOME"], os.environ["TMPDIR"], os.environ["PWD"]]
    found = sorted(os.listdir("."))
    open("left.txt", "w").close()
    if crash:
        os._exit(3)
    return names, found
"""


def test_every_process_starts_in_an_empty_folder_its_environment_names(pool: SandboxPool) -> None:
    """Folder names recur from job to job (the count restarts at each cleanup) and the
    zygote sets the environment naming them before it forks: each process (the one
    that takes over after a crash too) still starts in an empty folder, named by HOME,
    TMPDIR and PWD."""
    calls = [Call(args=(False,)), Call(args=(True,)), Call(args=(False,))]
    seen = []
    for _ in range(3):
        run = pool.run_function(PY, FOLDER, "look", calls, timeout=10)
        first, crashed, second = run.outcomes
        assert crashed.status == "crashed", crashed
        for outcome in (first, second):  # the first process, then the one after the crash
            names, found = outcome.value
            assert len(set(names)) == 1 and os.path.basename(names[0]).startswith("job"), names
            assert found == [], "a process found another's files"
        seen.append(first.value[0][0])
    assert len(set(seen)) == 1, "each job's first process reuses the same name, emptied"


def test_a_child_forked_on_request_is_named_by_its_own_folder(pool: SandboxPool) -> None:
    """With the spare gone, the zygote forks a child for the job into the next folder
    name: the environment it sets before that fork names that folder, not the spare's."""
    who(pool)
    sandbox = idle_candidate_sandbox(pool)
    (host_pid,) = procfs.children_of(sandbox.zygote_pid)
    os.kill(host_pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while not procfs.is_zombie(host_pid) and procfs.alive(host_pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    run = pool.run_function(PY, FOLDER, "look", [Call(args=(False,))], timeout=10)
    assert run.outcomes[0].ok, run.outcomes[0]
    names, found = run.outcomes[0].value
    assert len(set(names)) == 1 and os.path.basename(names[0]) == "job2", names
    assert found == []
