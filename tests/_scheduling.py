"""How ``scripts/test`` spreads the suite over processes (pytest-xdist).

Two phases, named by ``ASSAY_TEST_PHASE`` (unset: one run of everything): ``parallel``
runs all but the load-sensitive files on several workers (``-n``); ``serial`` runs the files
in ``LOAD_SENSITIVE`` afterwards in one process, alone on the machine, because what they
assert depends on the machine being otherwise idle (CPU shares, a kernel-timed limit, a
memory peak, a thread or process count, how quickly a stalled peer is noticed). A phase is
chosen by deselecting, so a caller's own ``-m``/``-k`` still applies within it; the files
(and, in the serial phase, the folders) of the other phase are not even imported.

In the parallel phase each file goes to one worker (``--dist loadfile``), so its module
fixtures are built once. (xdist 3.8's ``loadgroup`` names a test's group by a suffix of its
node id, which pytest 9 no longer lets a plugin change: its groups were silently ignored, a
file's tests spread over both workers.) Tests are still marked with a group (the Ray
cluster's and the browser's span files), by which files are handed out costliest first
(``durations.json``: seconds per file from a past run; scripts/test passes
``--no-loadscope-reorder`` so xdist keeps this order instead of its own by test count), so
that no long file starts last while the other worker idles; a group spanning files is
contiguous in that order but may still reach both workers.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

#: seconds per file of a past run (``scripts/durations.py --json LOG``); a file not in it
#: is guessed at this much per test
COSTS = TESTS / "durations.json"
SECONDS_PER_UNKNOWN_TEST = 0.3

#: files (under tests/) whose assertions need an idle machine, with why. Not here: the
#: parsers' growth ratios (``assert_linear``, tests/_linear.py), which time this thread's
#: CPU alone, best of several, and so hold on a loaded machine by construction; nor the
#: files that passed 10 runs of 10 beside the others at load 7-16 (median 12.7, December
#: 2026: cli/test_shard.py, cli/test_interrupt.py, store/test_writer_process.py,
#: evaluation/test_row_threads.py, evaluation/test_writer.py,
#: evaluators/sql/test_result_memory.py), which run in the parallel phase.
LOAD_SENSITIVE = {
    "sandbox/test_cpu_fairness.py": "CPU shares between sandboxes",
    "evaluators/code/test_timing.py": "kernel-timed speed against a calibrated reference",
    "evaluators/code/test_parent_stall.py": "a stalled parent noticed within its budget",
    "sandbox/test_limits.py": "time limits",
    "sandbox/test_zygote_wakeups.py": "wakeups counted while idle",
    "sandbox/test_spare.py": "spare sandboxes ready within a wait",
    "sandbox/test_memory_cgroup.py": "memory peaks",
    # at load 13: "serve() did not open its port within 20 s" (1 run of 2; the bound is
    # 120 s now, not yet tried at load)
    "ui/test_memory_bound.py": "memory peaks",
    # at load 8-14: "row threads: 1 -> 13 (the workers wait)" (3 runs of 10)
    "evaluation/test_concurrency.py": "rows in flight at once",
}

#: requirements whose session resource one worker should hold for every test that needs it
SHARED_RESOURCES = ("ray", "browser")


def configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "serial: runs after the parallel phase, alone (tests/_scheduling.py)")


def relative(item: pytest.Item) -> str:
    try:
        return Path(str(item.path)).resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return str(item.path)


def group_of(item: pytest.Item, needs: set[str]) -> str:
    shared = [name for name in SHARED_RESOURCES if name in needs]
    return shared[0] if shared else relative(item)


def ignored(path: Path) -> bool | None:
    """In a phase, whether pytest should not even import ``path`` (a test file or a
    folder): the serial phase imports its few files instead of the whole suite, whose
    imports cost each pytest process ~12 s of CPU. ``None`` leaves pytest's own rules."""
    phase = os.environ.get("ASSAY_TEST_PHASE")
    if phase not in ("parallel", "serial"):
        return None
    try:
        name = path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return None
    if path.is_dir():
        if name == ".":
            return None
        holds_serial = any(serial.startswith(f"{name}/") for serial in LOAD_SENSITIVE)
        return True if phase == "serial" and not holds_serial else None
    if not (path.name.startswith("test_") and path.suffix == ".py"):
        return None
    return True if (name in LOAD_SENSITIVE) != (phase == "serial") else None


def mark(config: pytest.Config, items: list[pytest.Item], needs_of: object) -> None:
    """Mark the load-sensitive tests ``serial``, put every test in its worker group, and
    keep only this phase's tests."""
    assert callable(needs_of)
    for item in items:
        if relative(item) in LOAD_SENSITIVE:
            item.add_marker(pytest.mark.serial)
        item.add_marker(pytest.mark.xdist_group(group_of(item, needs_of(item))))
    phase = os.environ.get("ASSAY_TEST_PHASE")
    if phase not in ("parallel", "serial"):
        return
    kept = [item for item in items if (item.get_closest_marker("serial") is not None) == (phase == "serial")]
    config.hook.pytest_deselected(items=[item for item in items if item not in kept])
    items[:] = costliest_groups_first(kept) if phase == "parallel" else kept


def group_name(item: pytest.Item) -> str:
    marker = item.get_closest_marker("xdist_group")
    assert marker is not None, "mark() gives every test a group"
    return str(marker.args[0])


def costliest_groups_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """The items, grouped, the group expected to take longest first (a group keeps its
    items' order)."""
    known: dict[str, float] = json.loads(COSTS.read_text()) if COSTS.exists() else {}
    cost: dict[str, float] = defaultdict(float)
    counted: set[tuple[str, str]] = set()
    for item in items:
        group, path = group_name(item), relative(item)
        if path not in known:
            cost[group] += SECONDS_PER_UNKNOWN_TEST
        elif (group, path) not in counted:
            counted.add((group, path))
            cost[group] += known[path]
    first_seen = {group: index for index, group in reversed(list(enumerate(map(group_name, items))))}
    return sorted(items, key=lambda item: (-cost[group_name(item)], first_seen[group_name(item)]))
