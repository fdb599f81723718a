"""The resident Python checker: reused between test programs only while nothing
interpreter-wide changed, replaced after anything unusual, never reachable by candidates."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from assay.sandbox import Limits, ProgramRun, SandboxConfig, SandboxPool

DEFAULT = Limits()
GOOD = "def f():\n    return 1\n"
REPORT_PID = (
    "import os\n\ndef check(candidate):\n    assert candidate() == 1\n"
    "    assert False, 'pid=%d' % os.getpid()\n"
)


def checker_pid(run: ProgramRun) -> int:
    match = re.search(r"pid=(\d+)", run.verdict.get("message") or "")
    assert match, run.verdict
    return int(match.group(1))


@pytest.fixture(params=["bubblewrap", "unshare"])
def pool(request: pytest.FixtureRequest, make_pool: Callable[..., SandboxPool]) -> SandboxPool:
    chosen = make_pool(request.param)
    assert chosen.config.reuse_checker
    return chosen


def run(
    pool: SandboxPool,
    python: Any,
    test: str,
    program: str = GOOD,
    timeout: float = 10,
    limits: Limits = DEFAULT,
) -> ProgramRun:
    return pool.run_test_program(python, program, test, "f", timeout, limits)


def test_the_same_process_serves_consecutive_programs(pool: SandboxPool, python: Any) -> None:
    pids = {checker_pid(run(pool, python, REPORT_PID)) for _ in range(3)}
    assert len(pids) == 1


def test_without_reuse_every_program_gets_a_fresh_process(python: Any) -> None:
    with SandboxPool(SandboxConfig(backend="bubblewrap", workers=1, reuse_checker=False)) as fresh:
        pids = {checker_pid(run(fresh, python, REPORT_PID)) for _ in range(3)}
        assert len(pids) == 3
        assert fresh.stray_processes() == []


@pytest.mark.parametrize(
    "mutation",
    [
        "import builtins\nbuiltins.leaked = 1",
        "import math\nmath.sqrt = lambda x: 0",
        "import sys\nsys.setrecursionlimit(50)",
        "open('left-behind.txt', 'w').close()",
        "import signal\nsignal.alarm(30)",
        "import threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()",
        "import os, time\nif os.fork() == 0:\n    time.sleep(30)\n    os._exit(0)",
        "import os\nos.environ['LEAK'] = '1'",
        "import sys\nsys.modules['json'] = None",
        "import os\nos.listdir = None",
    ],
)
def test_a_program_that_changes_global_state_gets_no_successor(
    pool: SandboxPool, python: Any, mutation: str
) -> None:
    first = checker_pid(run(pool, python, REPORT_PID))
    dirty = mutation + "\n\ndef check(candidate):\n    assert candidate() == 1\n"
    assert run(pool, python, dirty).passed
    clean_check = (
        "import builtins, math, os, sys\n\ndef check(candidate):\n"
        "    assert candidate() == 1\n"
        "    assert not hasattr(builtins, 'leaked') and math.sqrt(4) == 2.0\n"
        "    assert sys.getrecursionlimit() > 50 and os.listdir('.') == []\n"
        "    assert 'LEAK' not in os.environ and sys.modules.get('json')\n"
        "    assert callable(os.listdir)\n"
        "    assert False, 'pid=%d' % os.getpid()\n"
    )
    after = run(pool, python, clean_check)
    assert after.verdict["kind"] == "assertion" and "pid=" in after.verdict["message"], after.verdict
    assert checker_pid(after) != first


def test_hostile_candidates_cannot_reach_it(pool: SandboxPool, python: Any) -> None:
    first = checker_pid(run(pool, python, REPORT_PID))
    for attack in (
        "import os, signal\nfor pid in range(1, 500):\n    try:\n"
        "        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass\n",
        "def f():\n    return [[]] * 10\n",
        "import os\nos._exit(3)\n",
    ):
        hostile = run(pool, python, REPORT_PID, program=attack)
        assert not hostile.passed
    assert checker_pid(run(pool, python, REPORT_PID)) == first, "untouched by all three"


@pytest.mark.slow
def test_a_timeout_replaces_it(pool: SandboxPool, python: Any) -> None:
    first = checker_pid(run(pool, python, REPORT_PID))
    hang = run(pool, python, "def check(candidate):\n    while True:\n        pass\n", timeout=1)
    assert hang.timed_out
    assert checker_pid(run(pool, python, REPORT_PID)) != first
    assert pool.stray_processes() == []


def test_other_limits_or_languages_replace_it(pool: SandboxPool, python: Any, javascript: Any) -> None:
    first = checker_pid(run(pool, python, REPORT_PID))
    assert checker_pid(run(pool, python, REPORT_PID, limits=Limits(max_open_files=200))) != first
    js = pool.run_test_program(
        javascript,
        "function f() { return 1; }",
        "function check(c) { if (c() !== 1) throw new Error('no'); }",
        "f",
        10,
    )
    assert js.passed
    second = checker_pid(run(pool, python, REPORT_PID))
    assert checker_pid(run(pool, python, REPORT_PID)) == second
    assert pool.stray_processes() == []


def test_a_resident_that_died_between_jobs_is_replaced(pool: SandboxPool, python: Any) -> None:
    import os
    import signal

    from assay.sandbox import _procfs

    first = checker_pid(run(pool, python, REPORT_PID))
    (box,) = [s for s in pool.checkers.started if s.resident is not None and not s.dead]
    resident_pids = [p for p in _procfs.children_of(box.zygote_pid)]
    assert len(resident_pids) == 1
    os.kill(resident_pids[0], signal.SIGKILL)
    again = run(pool, python, REPORT_PID)
    assert checker_pid(again) != first
