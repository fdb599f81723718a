"""Hostile candidates against a test program: the test runs in a separate sandbox, so the
candidate can neither see it, nor touch it, nor make it pass."""

from __future__ import annotations

import os
from typing import Any

import pytest

from assay.sandbox import ProgramRun, SandboxPool

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")

MARKER = "TEST-ONLY-" + os.urandom(6).hex()
TEST = f"""
def check(candidate):
    found = candidate()
    assert found == {MARKER!r}, f"the candidate returned {{found!r}}"
"""


def against_test(pool: SandboxPool, python: Any, body: str, timeout: float = 10) -> ProgramRun:
    program = "def probe():\n" + "".join(f"    {line}\n" for line in body.strip("\n").splitlines())
    return pool.run_test_program(python, program, TEST, "probe", timeout)


def test_the_test_program_is_invisible_to_the_candidate(pool: SandboxPool, python: Any) -> None:
    run = against_test(
        pool,
        python,
        """
import gc, os, re
pattern = re.compile(''.join(['TEST', '-ONLY-', '[0-9a-f]{12}']))
hits = []
for obj in gc.get_objects():
    try:
        if pattern.search(repr(obj)[:100000]):
            hits.append('gc')
    except Exception:
        pass
for pid in os.listdir('/proc'):
    for name in ('cmdline', 'environ'):
        try:
            with open('/proc/%s/%s' % (pid, name), 'rb') as handle:
                if pattern.search(handle.read().decode('latin-1')):
                    hits.append(pid + '/' + name)
        except OSError:
            pass
for folder, _, files in os.walk(os.path.dirname(os.getcwd())):
    for name in files:
        try:
            with open(os.path.join(folder, name), 'rb') as handle:
                if pattern.search(handle.read(1 << 20).decode('latin-1')):
                    hits.append(name)
        except OSError:
            pass
return 'hits: %r' % hits""",
    )
    assert not run.passed
    assert run.verdict["kind"] == "assertion", run.verdict
    assert "hits: []" in run.verdict["message"]


def test_killing_everything_in_reach_cannot_make_the_test_pass(pool: SandboxPool, python: Any) -> None:
    run = against_test(
        pool,
        python,
        """
import os, signal
for pid in range(1, 400):
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
try:
    os.kill(-1, signal.SIGKILL)
except ProcessLookupError:  # nothing else it may signal: its own pid is past 400
    pass
return 'unreachable'""",
    )
    assert not run.passed
    # it killed itself (PID namespace: its pid is small) or only what it owns
    assert run.verdict["kind"] in ("candidate_ended", "assertion"), run.verdict.get("message")


@pytest.mark.parametrize(
    "body, kind",
    [
        ("class Anything:\n    def __eq__(self, other): return True\nreturn Anything()", "candidate_error"),
        ("raise SystemExit(0)", "candidate_error"),
        ("raise KeyboardInterrupt", "candidate_error"),
        ("import os\nos._exit(0)", "candidate_ended"),
        ("print('check passed'); print('{\"passed\": true}')\nreturn None", "assertion"),
        (
            "import os, struct\nos.write(4, struct.pack('>I', 5) + b'{\"ok\": true}')\nreturn 1",
            "candidate_ended",
        ),
        ("return 'x' * (80 * 1024 * 1024)", "candidate_ended"),
    ],
)
def test_forgery_attempts_fail(pool: SandboxPool, python: Any, body: str, kind: str) -> None:
    run = against_test(pool, python, body)
    assert not run.passed
    assert run.verdict["kind"] == kind, run.verdict


def test_candidate_sabotaging_its_load_fails_cleanly(pool: SandboxPool, python: Any) -> None:
    run = pool.run_test_program(
        python, "import sys\nsys.stdout.write('passed\\n')\nsys.exit(0)\n", TEST, "probe", 10
    )
    assert not run.passed
    assert run.verdict["stage"] == "load"
    assert "SystemExit" in str(run.verdict.get("error_type"))


@pytest.mark.slow
def test_a_hanging_candidate_times_out(pool: SandboxPool, python: Any) -> None:
    run = against_test(pool, python, "while True:\n    pass", timeout=1.5)
    assert not run.passed and run.timed_out
    assert "timed out after 1.5 s" in run.verdict["message"]
