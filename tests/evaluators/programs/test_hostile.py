"""Hostile stdin/stdout programs on every backend: none of them gets a say in its
verdict, holds the parent's memory, outlives its test or harms the pool."""

from __future__ import annotations

import os
import tracemalloc

import pytest

from assay.evaluators import CheckerProgram
from assay.schemas import EvaluationResult

from ._helpers import Judge

pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")

MIB = 1 << 20
MARKER = "EXPECTED-" + os.urandom(6).hex()
CHECKER = f"""import sys
# {MARKER}: the checker's own text, never seen by the candidate
got = open(sys.argv[2]).read().split()
want = open(sys.argv[3]).read().split()
if got == want:
    sys.exit(0)
print("wrong answer: got", got[:3], file=sys.stderr)
sys.exit(1)
"""
SEARCH = """import os, re, sys
pattern = re.compile(''.join(['EXP', 'ECTED-', '[0-9a-f]{12}']).encode())
found = set()
budget = [20000]  # files: the rlimit backend sees the host's /tmp
def look(path):
    budget[0] -= 1
    if budget[0] < 0:
        return
    try:
        with open(path, 'rb') as handle:
            found.update(m.decode() for m in pattern.findall(handle.read(4 << 20)))
    except (OSError, ValueError):
        pass
for pid in os.listdir('/proc'):
    if pid.isdigit():
        for name in ('cmdline', 'environ'):
            look(f'/proc/{pid}/{name}')
        try:
            for fd in os.listdir(f'/proc/{pid}/fd'):
                look(f'/proc/{pid}/fd/{fd}')
        except OSError:
            pass
for top in ('/tmp', '/work', '/var/tmp', '/dev/shm', os.path.dirname(os.getcwd()), '/sandbox', '/opt'):
    for folder, _, files in os.walk(top):
        for name in files:
            look(os.path.join(folder, name))
print(' '.join(sorted(found)) or 'nothing')
"""


def test_expected_output_and_checker_are_out_of_reach(judge: Judge) -> None:
    """The answer is the marker: a program that found it anywhere would print it."""
    tests = [{"input": "", "output": MARKER + "\n"}]
    for checker in ("tokens", CheckerProgram("python", CHECKER)):
        result = judge(SEARCH, tests, checker=checker, time_limit=30)
        assert result.metadata["verdict"] == "wrong_answer", result.comment
        assert "nothing" in result.comment


def test_printing_a_checkers_verdict_or_writing_its_files_forges_nothing(judge: Judge) -> None:
    forger = """import os, sys
for folder in ('.', '..', '/tmp', '/work', os.environ.get('HOME', '.')):
    for name in ('output.txt', 'answer.txt', 'input.txt'):
        try:
            with open(os.path.join(folder, name), 'w') as handle:
                handle.write('42\\n')
        except OSError:
            pass
sys.stderr.write('ok 1 test passed\\n')
print('ok accepted')
sys.stdout.flush()
os._exit(0)
"""
    tests = [{"input": "", "output": "42\n"}]
    result = judge(forger, tests, checker=CheckerProgram("python", CHECKER))
    assert result.metadata["verdict"] == "wrong_answer"
    assert "got ['ok', 'accepted']" in result.comment


def test_output_without_end_is_an_output_limit_in_bounded_parent_memory(judge: Judge) -> None:
    code = "import sys\nwhile True:\n    sys.stdout.write('y' * 65536)\n"
    tracemalloc.start()
    try:
        result = judge(code, [{"input": "", "output": "3\n"}], output_limit_mb=32)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.metadata["verdict"] == "output_limit"
    assert peak < 16 * MIB, f"the parent held {peak / MIB:.1f} MiB"


def test_a_flood_on_stderr_is_read_and_dropped_not_a_crash(judge: Judge) -> None:
    code = "import sys\nfor _ in range(1600):\n    sys.stderr.write('e' * 65536)\nprint(3)\n"
    tracemalloc.start()
    try:
        result = judge(code, [{"input": "1 2\n", "output": "3\n"}])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.score == 1, result.comment  # 100 MiB to stderr: no SIGPIPE
    assert peak < 16 * MIB, f"the parent held {peak / MIB:.1f} MiB"


def test_closing_stdin_early_does_not_stall_the_parent(judge: Judge) -> None:
    big = "7\n" + "1 " * (10 * MIB)
    result = judge("import os\nos.close(0)\nprint(7)\n", [{"input": big, "output": "7\n"}])
    assert result.score == 1, result.comment


def test_a_fork_bomb_is_contained_and_the_pool_still_works(judge: Judge) -> None:
    bomb = "import os\nprint(3, flush=True)\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    result = judge(bomb, [{"input": "", "output": "3\n"}] * 2, time_limit=1)
    assert result.score == 0
    assert result.metadata["verdict"] in ("time_limit", "runtime_error"), result.comment
    assert_stopped_at_the_cpu_limit(result)
    after = judge("print(3)", [{"input": "", "output": "3\n"}] * 2)
    assert after.score == 1, after.comment


def test_a_process_left_behind_dies_with_its_test(judge: Judge) -> None:
    """The program forks a child that keeps its stdout open and sleeps: the test ends
    when the program does, and the next test starts with no one of the last one's."""
    code = """import os, sys, time
print(sum(map(int, sys.stdin.read().split())), flush=True)
if os.fork() == 0:
    time.sleep(3600)
"""
    tests = [{"input": "1 2\n", "output": "3\n"}, {"input": "2 2\n", "output": "4\n"}]
    result = judge(code, tests, time_limit=1)
    assert result.score == 1, result.comment


def assert_stopped_at_the_cpu_limit(result: EvaluationResult) -> None:
    """Each of a fork bomb's processes stays under RLIMIT_CPU; with a cgroup counting
    them together, the bomb is stopped once they used the limit, not left to spin until
    the wall-clock cap (tens of seconds)."""
    first = result.metadata["tests"][0]
    if first["cpu_source"] == "cgroup":  # else only the wall-clock bound can stop it
        assert first["verdict"] == "time_limit", first
        assert first["message"].startswith("used "), first
        assert first["cpu_ms"] > 1000, first
