"""Killing what a dead rlimit sandbox left behind (the other backends have a PID
namespace, whose processes all die with it)."""

from __future__ import annotations

import os
import signal
import time

ROUNDS = 50


def kill_uid(uid: int) -> None:
    """Every process of the sandbox's dedicated uid: stop them all first (a stopped
    fork bomb cannot fork), then kill; repeat until none is left."""
    for _ in range(ROUNDS):
        pids = _pids(lambda pid: os.stat(f"/proc/{pid}").st_uid == uid)
        if not pids:
            return
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
        time.sleep(0.005)


def kill_descendants_of(root: int) -> None:
    """Best effort without a dedicated uid: processes still linked to ``root``."""
    for _ in range(ROUNDS):
        parents = _parent_map()
        doomed = [pid for pid in parents if _descends(pid, root, parents)]
        if not doomed:
            return
        for pid in doomed:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)


def _descends(pid: int, root: int, parents: dict[int, int]) -> bool:
    seen = 0
    while pid in parents and seen < 4096:
        pid = parents[pid]
        if pid == root:
            return True
        seen += 1
    return False


def _parent_map() -> dict[int, int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return parents


def _pids(keep: object) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if keep(int(entry)):  # type: ignore[operator]
                    found.append(int(entry))
            except OSError:
                continue
    return found
