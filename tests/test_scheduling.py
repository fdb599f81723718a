"""The split of the suite in scripts/test: the load-sensitive files (tests/_scheduling.py)
exist under the names listed, and exactly their tests are marked ``serial``.

Each check collects named files, not the suite: pytest imports only the modules it is
given, so a collection costs seconds instead of a minute (the whole suite's imports)."""

from __future__ import annotations

import json
import os
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


def collected_files(phase: str, *args: str) -> set[str]:
    return set(collected_order(phase, *args))


def test_the_phases_split_the_files_between_them() -> None:
    given = sorted(SERIAL | ORDINARY)
    assert collected_files("serial", *given) == SERIAL
    assert collected_files("parallel", *given) == ORDINARY


def test_a_callers_marker_expression_applies_within_a_phase() -> None:
    with_slow, without_slow = "tests/sandbox/test_limits.py", "tests/evaluators/code/test_parent_stall.py"
    assert {with_slow, without_slow} <= SERIAL
    assert collected_files("serial", "-m", "slow", with_slow, without_slow, *ORDINARY) == {with_slow}


def collected_order(phase: str, *args: str) -> list[str]:
    env = {**os.environ, "ASSAY_TEST_PHASE": phase}
    collected = subprocess.run(
        # without the plugins no file collected here needs (~3 s of CPU at each start)
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *NO_PLUGINS, *args],
        cwd=HERE.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert collected.returncode == 0, collected.stdout[-2000:] + collected.stderr[-2000:]
    return [line.split("::")[0] for line in collected.stdout.splitlines() if "::" in line]


def test_the_parallel_phase_hands_out_the_costliest_file_first_and_keeps_each_file_together() -> None:
    costs = json.loads(scheduling.COSTS.read_text())
    light, heavy = "tests/test_errors.py", "tests/sandbox/test_go_programs.py"  # collected in this order
    assert costs[heavy.removeprefix("tests/")] > 10 * costs[light.removeprefix("tests/")]
    order = collected_order("parallel", light, heavy)
    blocks = [path for index, path in enumerate(order) if index == 0 or order[index - 1] != path]
    assert blocks == [heavy, light]
