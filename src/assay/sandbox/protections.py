"""What a sandbox protects against, so results can say what was missing."""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["Protections"]


_MISSING_TEXT = {
    "process_isolation": "no PID namespace: the code can see and signal other processes of its user",
    "network_isolation": "no network namespace: the code can reach the network",
    "filesystem_isolation": "no private filesystem: host files readable by its user are "
    "visible, and host folders are writable unless Landlock confines writes (see 'writes')",
    "unprivileged_user": "the code runs as root on the host (uid 0 in a user namespace)",
    "complete_tree_kill": "processes that escape the supervisor (by killing it first) may outlive the job",
}


@dataclass(frozen=True)
class Protections:
    """Always present in every backend: resource limits, a scrubbed environment, a
    wall-clock timeout enforced by the parent, and a verdict decided in the parent."""

    process_isolation: bool
    network_isolation: bool
    filesystem_isolation: bool
    unprivileged_user: bool
    complete_tree_kill: bool

    def missing(self) -> list[str]:
        return [_MISSING_TEXT[name] for name, present in asdict(self).items() if not present]

    def as_dict(self) -> dict[str, bool]:
        return asdict(self)
