"""The split of the suite in scripts/test: the load-sensitive files (tests/_scheduling.py)
exist under the names listed, and exactly their tests are marked ``serial``.

Each check collects named files, not the suite: pytest imports only the modules it is
given, so a collection costs seconds instead of a minute (the whole suite's imports)."""

from __future__ import annotations

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


def collected_files(phase: str, *args: str) -> set[str]:
    collected = collect(phase, *args)
    assert collected.returncode == 0, collected.stdout[-2000:] + collected.stderr[-2000:]
    return {line.split("::")[0] for line in collected.stdout.splitlines() if "::" in line}


def test_the_phases_split_the_files_between_them() -> None:
    given = sorted(SERIAL | ORDINARY)
    assert collected_files("serial", *given) == SERIAL
    assert collected_files("parallel", *given) == ORDINARY


def test_a_callers_marker_expression_applies_within_a_phase() -> None:
    with_slow, without_slow = "tests/sandbox/test_limits.py", "tests/evaluators/code/test_parent_stall.py"
    assert {with_slow, without_slow} <= SERIAL
    assert collected_files("serial", "-m", "slow", with_slow, without_slow, *ORDINARY) == {with_slow}


def test_a_phase_does_not_import_the_other_phases_files() -> None:
    # a folder, as CI gives the whole suite: pytest walks it, and the other phase's files
    # are skipped before import, so nothing is left to deselect
    for phase in ("serial", "parallel"):
        collected = collect(phase, "tests/sandbox")
        found = {line.split("::")[0] for line in collected.stdout.splitlines() if "::" in line}
        expected = {name for name in SERIAL if name.startswith("tests/sandbox/")}
        assert (found == expected) == (phase == "serial"), found
        assert found and "deselected" not in collected.stdout, collected.stdout[-2000:]
    # in the serial phase, a folder without serial files (and its conftest) is not entered
    serial_in_stats = collect("serial", "tests/stats")
    assert serial_in_stats.returncode == 5 and "deselected" not in serial_in_stats.stdout
