"""Process groups of Ray nodes, seen from /proc: which of their processes still run."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def running_members(groups: list[int]) -> list[str]:
    """The processes of ``groups`` that are neither gone nor zombies, as ``pid state``
    (a zombie has ended; init reaps it in its own time)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue  # ended while we looked
        if int(fields[2]) in groups and fields[0] != "Z":
            found.append(f"{stat.parent.name} {fields[0]}")
    return found


def kill_and_wait(group: int, limit: float = 60.0) -> list[str]:
    """SIGKILL to ``group``, then wait until none of it runs; what still runs after
    ``limit`` seconds (a bound for a broken machine, not a timing claim)."""
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        return []
    deadline = time.monotonic() + limit
    while (running := running_members([group])) and time.monotonic() < deadline:
        time.sleep(0.05)
    return running
