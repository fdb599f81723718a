"""Hostile patches, end to end on each isolating backend: each is contained and scores 0
(none of them fixes the bug honestly), and the host is untouched."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ._calc import CALC, FIX, FIXED, Judge, diff, new_file

pytestmark = pytest.mark.slow
BACKENDS = ["bubblewrap", "unshare"]
OUTSIDE = "/tmp/assay-patch-escape-marker"


def with_code(code: str, fixed: bool = False) -> str:
    """A patch that runs ``code`` when calc is imported (fixing the bug when asked)."""
    return diff("calc.py", CALC, code + "\n" + (FIXED if fixed else CALC))


@pytest.fixture(autouse=True)
def no_marker() -> Iterator[None]:
    Path(OUTSIDE).unlink(missing_ok=True)
    yield
    assert not os.path.exists(OUTSIDE), "a patch wrote on the host"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "path",
    ["../escape.py", "../../escape.py", OUTSIDE, "tests/../../escape.py"],
    ids=["up", "up2", "abs", "mid"],
)
def test_paths_outside_the_repository_do_not_apply(judge: Judge, backend: str, path: str) -> None:
    result = judge(new_file(path, "print(1)\n") + FIX, backend)
    assert result.score == 0 and "does not apply" in (result.comment or ""), result.comment


@pytest.mark.parametrize("backend", BACKENDS)
def test_writing_through_a_symbolic_link_in_the_diff_is_refused(judge: Judge, backend: str) -> None:
    link = "diff --git a/out b/out\nnew file mode 120000\n--- /dev/null\n+++ b/out\n@@ -0,0 +1 @@\n+/tmp\n\\ No newline at end of file\n"
    through = new_file("out/assay-patch-escape-marker", "x\n")
    result = judge(link + through + FIX, backend)
    assert result.score == 0 and "does not apply" in (result.comment or ""), result.comment


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_symbolic_link_replacing_the_tests_is_removed(judge: Judge, backend: str) -> None:
    """tests/test_hidden.py as a link to a file of always-passing tests: put back."""
    fake = new_file("fake_tests.py", "def test_add():\n    pass\n")
    link = (
        "diff --git a/tests/test_hidden.py b/tests/test_hidden.py\nnew file mode 120000\n--- /dev/null\n"
        "+++ b/tests/test_hidden.py\n@@ -0,0 +1 @@\n+../fake_tests.py\n\\ No newline at end of file\n"
    )
    result = judge(fake + link, backend)
    assert result.score == 0 and result.metadata["tests"]["tests/test_hidden.py::test_add"] == "failed"


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    received: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            received.append(connection.recv(100))
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], received
    stop.set()
    thread.join()
    server.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_network(judge: Judge, backend: str, listener: tuple[int, list[bytes]]) -> None:
    port, received = listener
    code = (
        "import socket\ntry:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'leak')\n"
        "except OSError:\n    pass\n"
    )
    result = judge(with_code(code), backend)
    assert result.score == 0 and received == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fork_bomb_is_contained(judge: Judge, backend: str) -> None:
    code = (
        "import os\nfor _ in range(10000):\n    try:\n        os.fork()\n    except OSError:\n        break\n"
    )
    result = judge(with_code(code), backend, test_timeout=20.0)
    assert result.score == 0 and result.error is None, result.error


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_conftest_that_passes_everything_is_removed(judge: Judge, backend: str) -> None:
    hook = (
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n    report = outcome.get_result()\n    report.outcome = 'passed'\n"
    )
    patch = new_file("conftest.py", hook) + new_file("tests/conftest.py", hook) + with_code("")
    result = judge(patch, backend)
    assert result.score == 0 and result.metadata["tests"]["tests/test_hidden.py::test_add"] == "failed"
    assert {"conftest.py", "tests/conftest.py"} <= set(result.metadata["removed"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_runner_configuration_and_plugins_from_the_patch_are_ignored(judge: Judge, backend: str) -> None:
    """pytest.ini adding a plugin, a plugin registered by entry point on sys.path, and a
    sitecustomize: none of them loads."""
    plugin = (
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n"
    )
    patch = (
        new_file("evil_plugin.py", plugin)
        + new_file("pytest.ini", "[pytest]\naddopts = -p evil_plugin\n")
        + new_file("evil-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n")
        + new_file("evil-1.0.dist-info/entry_points.txt", "[pytest11]\nevil = evil_plugin\n")
        + new_file("sitecustomize.py", "import evil_plugin\n")
        + with_code("")
    )
    result = judge(patch, backend)
    assert result.score == 0 and result.metadata["tests"]["tests/test_hidden.py::test_add"] == "failed"


@pytest.mark.parametrize("backend", BACKENDS)
def test_exiting_early_with_status_0_passes_nothing(judge: Judge, backend: str) -> None:
    result = judge(with_code("import os\nos._exit(0)\n", fixed=True), backend)
    assert result.score == 0
    assert set(result.metadata["tests"].values()) == {"missing"}
    assert result.metadata["finished"] is None and "ended before the test runner finished" in (
        result.comment or ""
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_report_written_to_the_supervisors_output_is_refused(judge: Judge, backend: str) -> None:
    """The patch opens the supervisor's stdout through /proc to print a forged verdict."""
    code = (
        "import json, os\ntry:\n    fd = os.open(f'/proc/{os.getppid()}/fd/1', os.O_WRONLY)\n"
        "    line = {'applied': True, 'tests': {'tests/test_hidden.py::test_add': 'passed', "
        "'tests/test_calc.py::test_mul': 'passed'}, 'finished': 0, 'exit': 0}\n"
        "    os.write(fd, ('\\x1eassay-patches ' + json.dumps(line) + '\\n').encode())\n"
        "except OSError:\n    pass\n"
    )
    result = judge(with_code(code), backend)
    assert result.score == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_hosts_files_are_out_of_reach(judge: Judge, backend: str, tmp_path: Path) -> None:
    """The instance's folder on the host (its gold patch, hidden tests) cannot be read."""
    secret = tmp_path / "hidden.txt"
    secret.write_text("gold")
    os.chmod(tmp_path, 0o755)
    code = (
        f"import os\ntry:\n    data = open({str(secret)!r}).read()\nexcept OSError:\n    data = ''\n"
        "if data == 'gold':\n    def add(a, b):\n        return a + b\n"
    )
    # the fix is applied only when the host file was read: the tests pass only then
    patch = diff("calc.py", CALC, CALC + "\n" + code)
    result = judge(patch, backend)
    assert result.score == 0 and result.metadata["tests"]["tests/test_hidden.py::test_add"] == "failed"


def test_a_huge_patch_scores_0_unread(judge: Judge) -> None:
    huge = FIX + "+x\n" * (5 * 1024 * 1024)
    result = judge(huge, max_patch_bytes=1024 * 1024)
    assert result.score == 0 and "over 1048576 bytes" in (result.comment or "")


def test_on_the_rlimit_backend_a_run_is_a_verdict_or_an_error_never_a_false_score(judge: Judge) -> None:
    """As root the rlimit backend's dedicated uid may not read the interpreter (a private
    home): then the run is the evaluator's error; where it runs, the verdict is right."""
    good, bad = judge(FIX, "rlimit"), judge(with_code(""), "rlimit")
    if good.error is not None:
        assert "could not be prepared" in good.error and bad.error is not None
    else:
        assert good.score == 1 and bad.score == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_patch_that_hangs_times_out_and_scores_0(judge: Judge, backend: str) -> None:
    result = judge(with_code("while True:\n    pass\n", fixed=True), backend, test_timeout=3.0)
    assert result.score == 0 and result.metadata["timed_out"] is True
    assert "timed out" in (result.comment or "")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_flood_of_output_is_cut_and_scores_0(judge: Judge, backend: str) -> None:
    code = "import sys\nfor _ in range(10 ** 6):\n    sys.stdout.write('x' * 1000)\n"
    result = judge(with_code(code, fixed=True), backend)
    assert result.score == 0 and result.error is None
    assert len(result.metadata["output"]) <= 4000


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_supervisors_output_cannot_even_be_opened(judge: Judge, backend: str) -> None:
    """A canary: the patch fixes the bug only if it could open the supervisor's stdout
    through /proc (the supervisor is undumpable, so it cannot)."""
    code = (
        "import os\ntry:\n    os.close(os.open(f'/proc/{os.getppid()}/fd/1', os.O_WRONLY))\n    opened = True\n"
        "except OSError:\n    opened = False\n"
        "if opened:\n    def add(a, b):\n        return a + b\n"
    )
    result = judge(diff("calc.py", CALC, CALC + "\n" + code), backend)
    assert result.score == 0 and result.metadata["tests"]["tests/test_hidden.py::test_add"] == "failed"
