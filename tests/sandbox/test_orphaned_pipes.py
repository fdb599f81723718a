"""A process that ends while processes it forked still hold its pipes: it has ended all the
same. Its exit (a code, a signal) is the outcome at once, not a timeout at the end of its
limit while the parent waits for the pipes to close; what it left is killed with the job.
Adversarial candidates and test programs on every backend, real sandboxes.

The limit is generous (``LIMIT``): a crash is named as one however loaded the machine,
and the old behaviour (waiting out the limit) is named ``timeout``."""

from __future__ import annotations

from typing import Any

from assay.sandbox import Call, SandboxPool

LIMIT = 30.0

# a child that keeps every descriptor it inherited (stdout, stderr, the frame pipes) open,
# in a session of its own so that a kill of the job's process group misses it
ORPHAN = """import os, signal, time

def leave_an_orphan():
    if os.fork() == 0:
        os.setsid()
        while True:
            time.sleep(3600)
"""
EXITS = f"""{ORPHAN}
def solution(n):
    if n == 1:
        leave_an_orphan()
        os._exit(3)
    return n * 10
"""
CRASHES = f"""{ORPHAN}
def solution(n):
    leave_an_orphan()
    os.kill(os.getpid(), signal.SIGSEGV)
"""
EXITS_WHILE_LOADING = f"""{ORPHAN}
leave_an_orphan()
os._exit(4)

def solution(n):
    return n
"""


def test_a_candidate_that_exits_leaving_an_orphan_has_crashed_and_the_next_call_runs(
    pool: SandboxPool, python: Any
) -> None:
    run = pool.run_function(python, EXITS, "solution", [Call((1,)), Call((2,))], LIMIT)
    first, second = run.outcomes
    assert (first.status, first.message) == (
        "crashed",
        "the candidate's process exited with code 3 during the call",
    )
    assert (second.status, second.value) == ("ok", 20)  # a fresh process took the rest
    assert not run.timed_out and run.restarts == 1
    # and the orphan died with the job: the pool fixture finds no stray process


def test_a_candidate_that_crashes_by_a_signal_leaving_an_orphan_is_named_so(
    pool: SandboxPool, python: Any
) -> None:
    run = pool.run_function(python, CRASHES, "solution", [Call((1,))], LIMIT)
    (outcome,) = run.outcomes
    assert outcome.status == "crashed" and "segmentation fault (SIGSEGV" in str(outcome.message), outcome
    assert not run.timed_out


def test_a_candidate_that_exits_while_loading_leaving_an_orphan_is_a_load_failure(
    pool: SandboxPool, python: Any
) -> None:
    run = pool.run_function(python, EXITS_WHILE_LOADING, "solution", [Call((1,))], LIMIT)
    assert run.load_failure is not None and not run.timed_out
    assert (run.load_failure.kind, run.load_failure.message) == (
        "ended",
        "the candidate's process exited with code 4 before it was ready",
    )


def test_a_test_program_sees_its_candidate_end_though_an_orphan_holds_the_reply_pipe(
    pool: SandboxPool, python: Any
) -> None:
    """The checker reads the candidate's replies in another sandbox: it learns of the end
    only when that pipe closes, so the parent kills what the candidate left."""
    test = "def check(candidate):\n    assert candidate(1) == 10\n"
    program = pool.run_test_program(python, EXITS, test, "solution", LIMIT)
    assert not program.passed and not program.timed_out
    assert program.verdict["kind"] == "candidate_ended", program.verdict


def test_a_test_program_that_exits_leaving_an_orphan_has_ended(pool: SandboxPool, python: Any) -> None:
    """The test program's side too (model-written tests are code as well), whether its
    process is fresh or the resident checker kept between jobs (namespace backends)."""
    test = f"{ORPHAN}\ndef check(candidate):\n    leave_an_orphan()\n    os._exit(5)\n"
    honest = "def solution(n):\n    return n * 10\n"
    for _ in range(2):  # a resident checker (namespace backends) that ended is replaced
        program = pool.run_test_program(python, honest, test, "solution", LIMIT)
        assert not program.passed and not program.timed_out
        assert program.verdict["kind"] == "checker_ended", program.verdict
        assert program.verdict["message"] == "the test program exited with code 5 during the call"
        fine = pool.run_test_program(
            python, honest, "def check(c):\n    assert c(2) == 20\n", "solution", LIMIT
        )
        assert fine.passed, fine.verdict
