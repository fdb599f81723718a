"""Hostile Python candidates: each tries to forge a pass or harm the host, on every backend.

The expected output is an unguessable marker that exists only in this process; a
candidate can pass only by returning it. Each attack also reports what it managed to
see or do, so the tests prove containment, not merely a failing score.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from assay.sandbox import Call, FunctionRun, Limits, SandboxPool, values_equal
from assay.sandbox.harness import landlock

# the rlimit backend warns about what it lacks; test_backends.py checks the warning itself
pytestmark = pytest.mark.filterwarnings("ignore::assay.sandbox.SandboxIsolationWarning")

MARKER = "EXPECTED-" + os.urandom(8).hex()
CASES = [Call(("probe",)), Call(("honest",))]
SECRET = "sk-assay-test-secret-3f9a1c"


DEFAULT = Limits()


def attack(
    pool: SandboxPool, python: Any, body: str, timeout: float = 10, limits: Limits = DEFAULT
) -> FunctionRun:
    """``body`` runs for the "probe" case; "honest" just returns the marker's length."""
    code = f"def solution(case):\n    if case == 'honest':\n        return {len(MARKER)}\n" + "".join(
        f"    {line}\n" for line in body.strip("\n").splitlines()
    )
    return pool.run_function(python, code, "solution", CASES, timeout, limits)


def passed(run: FunctionRun) -> list[bool]:
    expected = [MARKER, len(MARKER)]
    return [o.ok and values_equal(e, o.value) for e, o in zip(expected, run.outcomes)]


def test_permissive_eq_object_cannot_pass(pool: SandboxPool, python: Any) -> None:
    run = attack(
        pool,
        python,
        """
class Anything:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
return Anything()""",
    )
    assert passed(run) == [False, True]
    assert run.outcomes[0].error_type == "UnsupportedReturnValue"


def test_builtin_subclass_with_permissive_eq_is_reduced_to_its_value(pool: SandboxPool, python: Any) -> None:
    run = attack(
        pool,
        python,
        """
class Liar(str):
    def __eq__(self, other): return True
    __hash__ = str.__hash__
    def __str__(self): return 'anything'
return Liar('not the marker')""",
    )
    assert run.outcomes[0].value == "not the marker"
    assert passed(run) == [False, True]


def test_expected_output_never_enters_the_sandbox(pool: SandboxPool, python: Any) -> None:
    """Stack walking, gc scanning, /proc/self/mem: the marker is nowhere to be found."""
    run = attack(
        pool,
        python,
        """
import gc, sys
found = []
frame = sys._getframe()
while frame is not None:
    found += [repr(v) for v in frame.f_locals.values()]
    frame = frame.f_back
for obj in gc.get_objects():
    try:
        found.append(repr(obj)[:2000])
    except Exception:
        pass
hits = [text for text in found if 'EXPECTED-' in text and 'found' not in text]
with open('/proc/self/maps') as maps, open('/proc/self/mem', 'rb', 0) as mem:
    for line in maps:
        span, perms = line.split()[:2]
        if 'r' not in perms:
            continue
        start, end = (int(x, 16) for x in span.split('-'))
        try:
            mem.seek(start)
            chunk = mem.read(min(end - start, 1 << 24))
        except (OSError, OverflowError, ValueError):
            continue
        index = chunk.find(b'EXPECTED-' + b'0' * 0)
        while index != -1:
            hits.append(chunk[index:index + 25].decode('latin-1'))
            index = chunk.find(b'EXPECTED-', index + 1)
return [h for h in hits if len(h) >= 25 and h[9:25].isalnum() and not h[9:25].isalpha()]""",
    )
    assert run.outcomes[0].ok, run.outcomes[0]
    assert MARKER not in repr(run.outcomes[0].value)
    assert passed(run) == [False, True]


def test_system_exit_is_a_failure(pool: SandboxPool, python: Any) -> None:
    run = attack(pool, python, "raise SystemExit(0)")
    assert run.outcomes[0].status == "error" and run.outcomes[0].error_type == "SystemExit"
    assert passed(run) == [False, True]


def test_os_exit_fails_the_call_and_a_fresh_process_takes_the_rest(pool: SandboxPool, python: Any) -> None:
    run = attack(pool, python, "import os\nos._exit(0)")
    assert run.outcomes[0].status == "crashed"
    assert "exited with code 0 during the call" in (run.outcomes[0].message or "")
    assert run.restarts == 1
    assert passed(run) == [False, True]


def test_printed_fake_verdicts_are_only_output(pool: SandboxPool, python: Any) -> None:
    run = attack(
        pool,
        python,
        """
import json
print('All test cases passed successfully.')
print(json.dumps([{'status': 'success', 'output': 'EXPECTED'}]))
print('{"ok": true, "value": "EXPECTED"}', flush=True)
return None""",
    )
    assert "All test cases passed successfully." in run.output.stdout
    assert passed(run) == [False, True]


def test_forged_frames_on_the_result_channel_cannot_pass(pool: SandboxPool, python: Any) -> None:
    run = attack(
        pool,
        python,
        """
import json, os, struct
def frame(message):
    body = json.dumps(message).encode()
    os.write(4, struct.pack('>I', len(body)) + body)
frame({'ok': True, 'value': 'EXPECTED-guess'})
frame({'ok': True, 'value': 'EXPECTED-guess-for-the-next-call'})
os.write(4, b'\\xff\\xff\\xff\\xff garbage')
return 'EXPECTED-guess-3'""",
    )
    assert passed(run)[0] is False
    # the garbage after the forged frames ends that process; the rest still runs
    assert any(o.status in ("crashed", "error", "ok") for o in run.outcomes)


def test_killing_the_parent_and_the_supervisor_fails_harmlessly(pool: SandboxPool, python: Any) -> None:
    parent = os.getppid()  # 1 already when the suite runs detached (a daemonized CI job)
    run = attack(
        pool,
        python,
        """
import os, signal
errors = []
for target in (os.getppid(), 1, 0):
    try:
        os.kill(target, signal.SIGKILL) if target else os.killpg(os.getpgid(0), signal.SIGCONT)
    except OSError as exc:
        errors.append(type(exc).__name__)
return errors""",
    )
    assert passed(run) == [False, True]
    assert os.getppid() == parent  # this test process and its parent are alive
    os.kill(parent, 0)


@pytest.mark.slow
def test_patching_builtins_and_the_harness_changes_nothing(pool: SandboxPool, python: Any) -> None:
    """The candidate breaks its own harness (len() is 0 now): it can only fail or hang."""
    run = attack(
        pool,
        python,
        timeout=2,
        body="""
import builtins, json, sys
builtins.isinstance = lambda *a: True
builtins.len = lambda *a: 0
json.dumps = lambda *a, **k: '{"ok": true, "value": "EXPECTED"}'
for name, module in list(sys.modules.items()):
    if name.endswith('codec'):
        module.encode = lambda value, depth=0: 'EXPECTED-forged'
return 'whatever'""",
    )
    assert passed(run)[0] is False


def test_environment_is_scrubbed(pool: SandboxPool, python: Any) -> None:
    assert os.environ.get("ASSAY_TEST_API_KEY") == SECRET  # the parent has it
    run = attack(
        pool,
        python,
        """
import os
seen = dict(os.environ)
leaks = []
for path in ('/proc/self/environ', '/proc/1/environ', '/proc/%d/environ' % os.getppid()):
    try:
        with open(path, 'rb') as handle:
            leaks.append(handle.read().decode('latin-1'))
    except OSError:
        pass
return [seen, leaks]""",
    )
    assert run.outcomes[0].ok
    assert SECRET not in repr(run.outcomes[0].value)
    env = run.outcomes[0].value[0]
    assert set(env) <= {
        "PATH",
        "LANG",
        "LC_ALL",
        "HOME",
        "TMPDIR",
        "PWD",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONIOENCODING",
    }


def test_raising_limits_is_refused(pool: SandboxPool, python: Any) -> None:
    run = attack(
        pool,
        python,
        """
import resource
refused = []
for limit in (resource.RLIMIT_NPROC, resource.RLIMIT_DATA, resource.RLIMIT_CPU):
    try:
        resource.setrlimit(limit, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    except (ValueError, OSError):
        refused.append(limit)
return refused""",
    )
    assert len(run.outcomes[0].value) == 3


def test_sabotaging_the_working_folder_does_not_break_cleanup(pool: SandboxPool, python: Any) -> None:
    run = attack(
        pool,
        python,
        """
import os
os.makedirs('deep/er/est')
with open('deep/er/est/file', 'w') as handle:
    handle.write('x')
for path in ('deep/er/est', 'deep/er', 'deep', '.'):
    os.chmod(path, 0)
return sorted(os.listdir('/proc/self/fd'))""",
    )
    assert passed(run) == [False, True]
    clean = attack(pool, python, "import os\nreturn os.listdir('.')")
    assert clean.outcomes[0].value == [], "the next candidate must get an empty folder"


def test_interpreter_crashes_are_contained(pool: SandboxPool, python: Any) -> None:
    run = attack(
        pool,
        python,
        """
import json, sys
sys.setrecursionlimit(10 ** 8)
return json.loads('[' * 10 ** 6 + ']' * 10 ** 6)""",
    )
    assert run.outcomes[0].status == "crashed"
    assert "segmentation fault" in (run.outcomes[0].message or "")
    assert passed(run) == [False, True]


def test_runaway_recursion_is_an_error(pool: SandboxPool, python: Any) -> None:
    run = attack(
        pool,
        python,
        """
def down(n):
    return down(n + 1) + 1
return down(0)""",
    )
    assert run.outcomes[0].error_type == "RecursionError"
    assert passed(run) == [False, True]


# -- isolation that only the namespace backends provide ------------------------------------
def test_host_files_are_invisible(isolating_pool: SandboxPool, python: Any, canary: Any) -> None:
    targets = [
        "/etc/passwd",
        "/etc/hostname",
        canary.path,
        "/work/main/pyproject.toml",
        os.path.expanduser("~/.bashrc"),
        "/proc/1/environ",
    ]
    run = attack(
        isolating_pool,
        python,
        f"""
readable = []
for path in {targets!r}:
    try:
        with open(path) as handle:
            handle.read(1)
        readable.append(path)
    except OSError:
        pass
import os
return [readable, sorted(os.listdir('/'))]""",
    )
    readable, root = run.outcomes[0].value
    assert readable == []
    assert set(root) <= {
        "usr",
        "bin",
        "lib",
        "lib64",
        "lib32",
        "libx32",
        "sbin",
        "proc",
        "dev",
        "work",
        "opt",
        "root",
        "home",
        "tmp",
        "etc",
    } - {"etc", "home", "tmp"}


def test_nothing_outside_the_working_folder_is_writable(
    isolating_pool: SandboxPool, python: Any, canary: Any
) -> None:
    targets = [
        "/evil",
        "/usr/evil",
        "/opt/assay/harness/codec.py",
        "/proc/evil",
        "/dev/evil",
        canary.path,
        os.path.join(canary.folder, "new"),
        "/tmp/evil",
        "/work/evil",
    ]
    run = attack(
        isolating_pool,
        python,
        f"""
import os
written = []
for path in {targets!r}:
    try:
        with open(path, 'a') as handle:
            handle.write('pwned')
        written.append(path)
    except OSError:
        pass
with open('mine.txt', 'w') as handle:
    handle.write('fine')
return [written, os.getcwd()]""",
    )
    written, cwd = run.outcomes[0].value
    assert written == []
    assert cwd.startswith("/work/job")
    assert canary.intact()


def test_no_network(isolating_pool: SandboxPool, python: Any, loopback: Any) -> None:
    run = attack(
        isolating_pool,
        python,
        f"""
import socket
results = []
for address in (('127.0.0.1', {loopback.port}), ('10.0.0.1', 80), ('1.1.1.1', 53)):
    try:
        socket.create_connection(address, timeout=1).close()
        results.append('connected')
    except OSError as exc:
        results.append(type(exc).__name__)
return results""",
    )
    assert "connected" not in run.outcomes[0].value
    assert loopback.connections == []


def test_other_processes_are_invisible_and_untouchable(isolating_pool: SandboxPool, python: Any) -> None:
    """Only its supervisor (PID 1) is visible: not readable, not signalable, not traceable."""
    run = attack(
        isolating_pool,
        python,
        """
import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
touched = []
for pid in pids:
    if pid == os.getpid():
        continue
    for path in ('/proc/%d/mem' % pid, '/proc/%d/environ' % pid):
        try:
            with open(path, 'rb') as handle:
                handle.read(1)
            touched.append(path)
        except OSError:
            pass
    try:
        os.kill(pid, signal.SIGKILL)
        touched.append('killed %d' % pid)
    except OSError:
        pass
    if libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
        touched.append('traced %d' % pid)
return [pids, touched]""",
    )
    pids, touched = run.outcomes[0].value
    assert len(pids) == 2 and pids[0] == 1, f"only its supervisor and itself: {pids}"
    assert touched == []


def test_rlimit_backend_records_what_it_lacks(make_pool: Any, python: Any, loopback: Any) -> None:
    pool = make_pool("rlimit")
    warm = attack(pool, python, "return 0")  # starts a sandbox, which adds its notes
    assert passed(warm) == [False, True]
    description = pool.describe()
    assert description["protections"] == {
        "process_isolation": False,
        "network_isolation": False,
        "filesystem_isolation": False,
        "unprivileged_user": True,
        "complete_tree_kill": True,
    }
    assert any("network" in text for text in description["missing"])
    run = attack(
        pool,
        python,
        f"""
import os, socket
import argparse, decimal, subprocess  # not preloaded: from the runtime, or its readable copy
try:
    with socket.socket() as sock:
        sock.settimeout(2)
        sock.connect((b'127.0.0.1', {loopback.port}))
    network = 'connected'
except OSError as exc:
    network = type(exc).__name__
writable = []
for path in ('/work/main/evil', '/etc/evil', '/root/evil'):
    try:
        open(path, 'w').close()
        writable.append(path)
    except OSError:
        pass
return [network, writable, os.getuid()]""",
    )
    network, writable, uid = run.outcomes[0].value
    # no network namespace (documented as missing); TCP refused where Landlock has ABI 4
    assert network == ("PermissionError" if landlock.abi_version() >= 4 else "connected")
    assert writable == [], "a dedicated unprivileged uid still cannot write the host's files"
    assert uid >= 1_900_000_000
    assert run.sandbox["missing"] == description["missing"]
    # a runtime in a private home (/root/.pyenv) is imported from a readable copy
    assert "only modules the zygote preloaded" not in " ".join(run.sandbox.get("notes", []))
    assert passed(run)[0] is False
    assert pool.stray_processes() == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to compare the two user modes")
def test_user_namespace_mode_is_isolated_too(make_pool: Any, python: Any, loopback: Any) -> None:
    for backend in ("bubblewrap", "unshare"):
        pool = make_pool(backend, user_namespace=True)
        run = attack(
            pool,
            python,
            f"""
import os, socket
try:
    socket.create_connection(('127.0.0.1', {loopback.port}), timeout=1).close()
    network = 'connected'
except OSError:
    network = 'refused'
return [os.getuid(), network, os.path.exists('/etc/passwd')]""",
        )
        assert run.outcomes[0].value == [65534, "refused", False]
        assert pool.describe()["protections"]["unprivileged_user"] is False  # root outside
        assert pool.stray_processes() == []
    assert loopback.connections == []


def test_values_that_would_flood_the_parent_are_refused(pool: SandboxPool, python: Any) -> None:
    """A few MiB of JSON can mean millions of objects: size and item count are capped."""
    run = attack(pool, python, "return ['x' * (5 * 1024 * 1024)]")
    assert run.outcomes[0].status == "crashed"
    assert "exceeds the 4194304-byte limit" in (run.outcomes[0].message or "")
    assert passed(run) == [False, True]


def test_a_python_candidate_cannot_claim_float32_precision(pool: SandboxPool, python: Any) -> None:
    """A float32 is compared at float32 precision; a Python process patching its harness to
    tag its float so gets a refused value, not the looser comparison."""
    code = """
import sys
for name, module in list(sys.modules.items()):
    if name.endswith('codec') and hasattr(module, '_ENCODERS'):
        module._ENCODERS[float] = lambda value, depth: {'$float32': value}

def solution():
    return 0.33333334
"""
    run = pool.run_function(python, code, "solution", [Call(())], 10)
    outcome = run.outcomes[0]
    assert not outcome.ok and outcome.error_type == "ProtocolError", outcome
    assert "without a float32" in (outcome.message or "")
