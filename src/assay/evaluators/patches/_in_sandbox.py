"""The program that runs inside the sandbox (never imported by assay itself).

It is sent as the sandbox script with ``PAYLOAD`` defined before it. Before any of the
candidate's code exists it imports pytest (from the instance's environment, else assay's
test tools) and makes itself undumpable, so a process of the tests cannot open its
output through /proc. Then it copies the read-only snapshot into the work folder, applies
the candidate's patch with ``git apply`` (which refuses paths outside the tree and writes
through symbolic links), removes what the patch added among the tests and any new
``conftest.py``, restores the instance's own test files, applies the hidden tests, and
runs the named tests in a forked process whose per-test outcomes come back over a pipe
opened here. It prints one report line; the trusted parent decides from it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from typing import Any

PAYLOAD: dict[str, Any] = globals().get("PAYLOAD", {})
MARK = "\x1eassay-patches "
WORK = os.path.join(os.getcwd(), ".assay")  # the job's own folder, emptied after it
OUTPUT_TAIL = 4000
MAX_RESULT_BYTES = 4 << 20
NEW_FILES_REMOVED = ("conftest.py", "sitecustomize.py", "usercustomize.py")
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "HOME": WORK,
    "PATH": "/usr/bin:/bin",
}


STARTED = time.monotonic()


def main() -> None:
    try:  # before any candidate file exists: a failure here is the sandbox's, not the patch's
        undumpable()
        if PAYLOAD["runner"] == "pytest":
            sys.path[1:1] = PAYLOAD["site_paths"]
            import pytest  # noqa: F401  (loaded once here: the repository cannot shadow it)

        os.makedirs(WORK, exist_ok=True)
        repo = os.path.join(os.getcwd(), "repo")
        shutil.copytree(PAYLOAD["snapshot"], repo, symlinks=True)
    except BaseException as exc:
        report({"setup_error": f"{type(exc).__name__}: {exc}"})
        return
    report({"ready": True})
    ready = time.monotonic() - STARTED
    verdict = judge(repo)
    verdict["phases"] = {"setup": round(ready, 3), "total": round(time.monotonic() - STARTED, 3)}
    report(verdict)


def undumpable() -> None:
    """PR_SET_DUMPABLE 0: processes of our uid cannot open /proc/<this>/fd (our stdout)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def report(line: dict[str, Any]) -> None:
    sys.stdout.write(MARK + json.dumps(line) + "\n")
    sys.stdout.flush()


def judge(repo: str) -> dict[str, Any]:
    applied, message = git_apply(repo, PAYLOAD["patch"], "candidate.patch")
    if not applied:
        return {"applied": False, "message": message}
    removed = neutralize(repo)
    restore(repo)
    if PAYLOAD["test_patch"]:
        tests_applied, tests_message = git_apply(repo, PAYLOAD["test_patch"], "tests.patch")
        if not tests_applied:
            return {"applied": True, "test_patch_error": tests_message}
    run = run_go_tests(repo) if PAYLOAD["runner"] == "go" else run_tests(repo, write_config(repo))
    return {"applied": True, "message": message, "removed": removed[:50], **run}


def git_apply(repo: str, patch: str, name: str) -> tuple[bool, str]:
    path = os.path.join(WORK, name)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(patch)
    try:
        done = subprocess.run(
            ["git", "apply", "--verbose", "--whitespace=nowarn", path],
            cwd=repo,
            capture_output=True,
            env=GIT_ENV,
            timeout=PAYLOAD["apply_timeout"],
        )
    except subprocess.TimeoutExpired:
        return False, f"git apply took over {PAYLOAD['apply_timeout']} s"
    text = (done.stderr + done.stdout).decode(errors="replace").strip()
    return done.returncode == 0, text[-OUTPUT_TAIL:]


def neutralize(repo: str) -> list[str]:
    """Remove what the patch added where the tests live, and anywhere a file the test
    runner or the interpreter loads by its name alone (conftest.py, sitecustomize.py)."""
    removed: list[str] = []
    for directory, dirs, files in os.walk(repo):
        relative = os.path.relpath(directory, repo)
        in_tests = any(relative == d or relative.startswith(d + "/") for d in PAYLOAD["test_dirs"])
        for name in [*files, *[d for d in dirs if os.path.islink(os.path.join(directory, d))]]:
            rel = os.path.normpath(os.path.join(relative, name))
            loaded_by_name = name in NEW_FILES_REMOVED or name.endswith("_test.go")  # TestMain
            if (in_tests or loaded_by_name) and not in_snapshot(rel):
                os.unlink(os.path.join(directory, name))
                removed.append(rel)
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(directory, d))]
    return removed


def in_snapshot(rel: str) -> bool:
    return os.path.lexists(os.path.join(PAYLOAD["snapshot"], rel))


def restore(repo: str) -> None:
    """The instance's test files as they were, whatever the patch did to them or to the
    folders above them (a symbolic link, a file in a folder's place)."""
    for rel in PAYLOAD["protected"]:
        target = os.path.join(repo, rel)
        real_parents(repo, rel)
        if os.path.lexists(target) and (os.path.islink(target) or not os.path.isdir(target)):
            os.unlink(target)
        elif os.path.isdir(target):
            shutil.rmtree(target)
        source = os.path.join(PAYLOAD["snapshot"], rel)
        if os.path.lexists(source):
            shutil.copy2(source, target, follow_symlinks=False)


def real_parents(repo: str, rel: str) -> None:
    current = repo
    for part in rel.split("/")[:-1]:
        current = os.path.join(current, part)
        if os.path.islink(current) or (os.path.lexists(current) and not os.path.isdir(current)):
            os.unlink(current)
        if not os.path.lexists(current):
            os.mkdir(current)


def write_config(repo: str) -> str:
    """The snapshot's own pytest configuration, copied where the patch cannot reach it."""
    name = PAYLOAD["config"]
    target = os.path.join(WORK, os.path.basename(name) if name else "pytest.ini")
    if name:
        shutil.copyfile(os.path.join(PAYLOAD["snapshot"], name), target)
    else:
        with open(target, "w") as handle:
            handle.write("[pytest]\n")
    return target


def run_tests(repo: str, config: str) -> dict[str, Any]:
    reader, writer = os.pipe()
    began = time.monotonic()
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            os.close(reader)
            code = child(repo, config, writer)
        finally:
            os._exit(code)
    os.close(writer)
    received = bytearray()
    try:
        exit_code, timed_out = wait(pid, began + PAYLOAD["test_timeout"], reader, received)
    finally:
        os.close(reader)
    try:
        os.killpg(pid, signal.SIGKILL)  # what the tests left running
    except OSError:
        pass
    return {
        "exit": exit_code,
        "timed_out": timed_out,
        "seconds": time.monotonic() - began,
        **outcomes(received),
        "output": tail(os.path.join(WORK, "output.txt")),
    }


def child(repo: str, config: str, channel: int) -> int:
    os.setpgid(0, 0)
    os.chdir(repo)
    log = os.open(os.path.join(WORK, "output.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.closerange(3, channel)
    os.closerange(channel + 1, 1 << 16)
    os.environ.update({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "HOME": WORK, "PYTHONDONTWRITEBYTECODE": "1"})
    for name in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONPATH"):
        os.environ.pop(name, None)
    sys.path[0:0] = [os.path.join(repo, p) for p in PAYLOAD["python_paths"]]
    import pytest

    args = ["-c", config, "--rootdir", repo, "-p", "no:cacheprovider", "-q", "-rN", *PAYLOAD["tests"]]
    return int(pytest.main(args, plugins=[Reporter(channel)]))


class Reporter:
    """Each test's phases as they end, one JSON line each, on the pipe."""

    def __init__(self, channel: int) -> None:
        self.channel = channel

    def send(self, line: dict[str, Any]) -> None:
        os.write(self.channel, (json.dumps(line) + "\n").encode())

    def pytest_runtest_logreport(self, report: Any) -> None:
        outcome = report.outcome
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        elif report.when != "call" and report.failed:
            outcome = "error"
        self.send({"id": report.nodeid, "when": report.when, "outcome": outcome})

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.send({"collect_error": report.nodeid, "message": str(report.longreprtext)[-800:]})

    def pytest_sessionfinish(self, session: Any, exitstatus: Any) -> None:
        self.send({"finished": int(exitstatus)})


def wait(pid: int, deadline: float, reader: int, received: bytearray) -> tuple[int, bool]:
    os.set_blocking(reader, False)
    while True:
        drain(reader, received)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            drain(reader, received)  # what the run wrote before it exited, not after
            return os.waitstatus_to_exitcode(status), False
        if time.monotonic() >= deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(pid, 0)
            return -9, True
        time.sleep(0.005)


def drain(reader: int, received: bytearray) -> None:
    while True:
        try:
            chunk = os.read(reader, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            return
        if len(received) <= MAX_RESULT_BYTES:
            received += chunk


PHASE_RANK = {"passed": 0, "skipped": 1, "xfailed": 1, "xpassed": 1, "failed": 2, "error": 3}


def outcomes(received: bytearray) -> dict[str, Any]:
    """Per test, the worst of its phases; collection errors; whether the session ended."""
    tests: dict[str, str] = {}
    errors: list[dict[str, str]] = []
    finished: int | None = None
    for raw in bytes(received[:MAX_RESULT_BYTES]).split(b"\n"):
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(line, dict):
            continue
        if isinstance(line.get("id"), str) and line.get("outcome") in PHASE_RANK:
            before = tests.get(line["id"])
            if before is None or PHASE_RANK[line["outcome"]] > PHASE_RANK[before]:
                tests[line["id"]] = line["outcome"]
        elif isinstance(line.get("collect_error"), str) and len(errors) < 20:
            errors.append({"where": line["collect_error"], "message": str(line.get("message"))[-800:]})
        elif isinstance(line.get("finished"), int):
            finished = line["finished"]
    return {"tests": tests, "collection_errors": errors, "finished": finished}


GO_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "GOPROXY": "off",  # nothing downloaded: dependencies are vendored or in the environment
    "GOFLAGS": "-mod=mod",
    "GOTOOLCHAIN": "local",
    "CGO_ENABLED": "0",
    "GOMAXPROCS": "2",
}


def run_go_tests(repo: str) -> dict[str, Any]:
    """``go test -json`` once per package folder named in the test ids (``dir::TestName``);
    the per-test events come from ``go test`` itself, reading the test binary's output."""
    scratch = os.path.join(WORK, "tmp")
    os.makedirs(scratch, exist_ok=True)
    env = {
        **GO_ENV,
        "HOME": WORK,
        "TMPDIR": scratch,
        "GOTMPDIR": scratch,
        "GOCACHE": os.path.join(WORK, "gocache"),
        "GOPATH": os.path.join(WORK, "gopath"),
    }
    packages: dict[str, list[str]] = {}
    for test in PAYLOAD["tests"]:
        folder, _, name = test.partition("::")
        packages.setdefault(folder, []).append(name)
    began = time.monotonic()
    tests: dict[str, str] = {}
    finished: int | None = 0
    timed_out, output, exit_code = False, "", 0
    for folder, names in packages.items():
        pattern = "^(" + "|".join(re.escape(n) for n in names) + ")$"
        argv = ["go", "test", "-json", "-count=1", "-run", pattern, "./" + folder.strip("/")]
        remaining = began + PAYLOAD["test_timeout"] - time.monotonic()
        code, late, text = run_bounded(argv, repo, env, remaining)
        exit_code = exit_code or code
        timed_out = timed_out or late
        seen, ended, shown = go_events(text, folder, set(names))
        tests.update(seen)
        output += shown
        finished = finished if ended else None
    with open(os.path.join(WORK, "output.txt"), "w") as handle:
        handle.write(output[-OUTPUT_TAIL:])
    return {
        "exit": exit_code,
        "timed_out": timed_out,
        "seconds": time.monotonic() - began,
        "tests": tests,
        "collection_errors": [],
        "finished": None if timed_out else finished,
        "output": output[-OUTPUT_TAIL:],
    }


def run_bounded(argv: list[str], cwd: str, env: dict[str, str], seconds: float) -> tuple[int, bool, bytes]:
    """Run ``argv`` in its own process group, its output kept up to ``MAX_RESULT_BYTES``."""
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    assert process.stdout is not None
    received = bytearray()
    reader = process.stdout.fileno()
    deadline = time.monotonic() + max(0.0, seconds)
    os.set_blocking(reader, False)
    late = False
    while process.poll() is None:
        drain(reader, received)
        if time.monotonic() >= deadline:
            late = True
            break
        time.sleep(0.005)
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass
    process.wait()
    drain(reader, received)
    process.stdout.close()
    return (-9 if late else process.returncode), late, bytes(received[:MAX_RESULT_BYTES])


def go_events(text: bytes, folder: str, names: set[str]) -> tuple[dict[str, str], bool, str]:
    """Outcomes of the named top-level tests, whether the package's run ended, its output."""
    tests: dict[str, str] = {}
    ended, shown = False, []
    for raw in text.split(b"\n"):
        try:
            event = json.loads(raw)
        except ValueError:
            shown.append(raw.decode(errors="replace") + "\n")
            continue
        if not isinstance(event, dict):
            continue
        action, test = event.get("Action"), event.get("Test")
        if isinstance(event.get("Output"), str):
            shown.append(event["Output"])
        if action in ("pass", "fail", "skip"):
            outcome = {"pass": "passed", "fail": "failed", "skip": "skipped"}[action]
            if test is None:
                ended = True
            elif test in names:
                before = tests.get(f"{folder}::{test}")
                if before is None or PHASE_RANK[outcome] > PHASE_RANK[before]:
                    tests[f"{folder}::{test}"] = outcome
    return tests, ended, "".join(shown)[-OUTPUT_TAIL:]


def tail(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - OUTPUT_TAIL))
            return handle.read().decode(errors="replace")
    except OSError:
        return ""


main()
