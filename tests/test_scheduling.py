"""The split of the suite in scripts/test: the load-sensitive files (tests/_scheduling.py)
exist under the names listed, and exactly their tests are marked ``serial``.

Each check imports few test modules, not the suite's ~290: named files, a small folder,
or the whole suite in the serial phase, which skips the other files before importing them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
scheduling = sys.modules["assay_tests_scheduling"]  # loaded by the root conftest
SERIAL = {f"tests/{name}" for name in scheduling.LOAD_SENSITIVE}
# files of the parallel phase beside the serial ones: one in a folder that has serial
# files too, one at the top
ORDINARY = {"tests/sandbox/test_codec.py", "tests/test_errors.py"}
NO_PLUGINS = ("-p", "no:langsmith_plugin", "-p", "no:schemathesis", "-p", "no:hypothesispytest")


def test_every_load_sensitive_file_exists() -> None:
    missing = [name for name in scheduling.LOAD_SENSITIVE if not (HERE / name).is_file()]
    assert not missing, f"moved or renamed? update tests/_scheduling.py: {missing}"


def collect(phase: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASSAY_TEST_PHASE": phase}
    return subprocess.run(
        # without the plugins no file collected here needs (~3 s of CPU at each start)
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *NO_PLUGINS, *args],
        cwd=HERE.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def files_in_order(collected: subprocess.CompletedProcess[str]) -> list[str]:
    assert collected.returncode == 0, collected.stdout[-2000:] + collected.stderr[-2000:]
    return [line.split("::")[0] for line in collected.stdout.splitlines() if "::" in line]


def files_of(collected: subprocess.CompletedProcess[str]) -> set[str]:
    return set(files_in_order(collected))


def test_the_serial_phase_is_exactly_the_load_sensitive_files() -> None:
    # the whole suite, as CI gives it: the other files are skipped before import (not
    # deselected), so this costs the serial files' imports only
    collected = collect("serial", "tests")
    assert files_of(collected) == SERIAL
    assert "deselected" not in collected.stdout, collected.stdout[-2000:]


def test_the_parallel_phase_leaves_them_out() -> None:
    # a folder holding a serial file among ordinary ones, and files named one by one
    code = {f"tests/evaluators/code/{path.name}" for path in (HERE / "evaluators" / "code").glob("test_*.py")}
    assert code & SERIAL and code - SERIAL
    collected = collect("parallel", "tests/evaluators/code", *ORDINARY)
    assert files_of(collected) == (code - SERIAL) | ORDINARY
    assert "deselected" not in collected.stdout, collected.stdout[-2000:]


def test_a_callers_marker_expression_applies_within_a_phase() -> None:
    with_slow, without_slow = "tests/sandbox/test_limits.py", "tests/evaluators/code/test_parent_stall.py"
    assert {with_slow, without_slow} <= SERIAL
    given = (with_slow, without_slow, *ORDINARY)
    assert files_of(collect("serial", "-m", "slow", *given)) == {with_slow}


def test_the_parallel_phase_hands_out_the_costliest_file_first_and_keeps_each_file_together() -> None:
    costs = json.loads(scheduling.COSTS.read_text())
    light, heavy = "tests/test_errors.py", "tests/sandbox/test_go_programs.py"  # collected in this order
    assert costs[heavy.removeprefix("tests/")] > 10 * costs[light.removeprefix("tests/")]
    order = files_in_order(collect("parallel", light, heavy))
    blocks = [path for index, path in enumerate(order) if index == 0 or order[index - 1] != path]
    assert blocks == [heavy, light]


def test_each_files_tests_run_on_one_worker() -> None:
    """scripts/test's parallel phase keeps a file on one worker, so its module fixtures (a
    Ray cluster, the container image, a browser) are set up once, not once per worker.
    (xdist's ``loadgroup`` spread them: pytest 9 ignores the node-id suffix it names groups by.)"""
    files = ("tests/test_errors.py", "tests/sandbox/test_codec.py")
    options = re.search(
        r"pytest -n \S+ (--dist \w+ --no-loadscope-reorder)", (HERE.parent / "scripts/test").read_text()
    )
    assert options is not None, "scripts/test's parallel phase changed: update this test"
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-n", "2", *options[1].split(), *NO_PLUGINS, *files],
        cwd=HERE.parent,
        env={**os.environ, "ASSAY_TEST_PHASE": "parallel"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    workers: dict[str, set[str]] = {}
    for line in ran.stdout.splitlines():
        if line.startswith("[gw") and " PASSED " in line:
            node = line.split(" PASSED ")[1]
            workers.setdefault(node.split("::")[0], set()).add(line.split()[0])
    assert set(workers) == set(files)
    assert all(len(seen) == 1 for seen in workers.values()), workers
