"""Reading /proc from the parent: pids, parents, PID namespaces, zombies."""

from __future__ import annotations

import os


def all_pids() -> list[int]:
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]


def children_of(parent: int) -> list[int]:
    found = []
    for pid in all_pids():
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if int(stat.read().rsplit(")", 1)[1].split()[1]) == parent:
                    found.append(pid)
        except (OSError, ValueError, IndexError):
            continue
    return found


def alive(pid: int) -> bool:
    try:
        return not is_zombie(pid)
    except OSError:
        return False


def is_zombie(pid: int) -> bool:
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] == "Z"


def pid_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None
