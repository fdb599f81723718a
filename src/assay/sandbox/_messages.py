"""Plain-English reasons for how a sandboxed process ended."""

from __future__ import annotations

from typing import Any

_SIGNALS = {
    "SIGKILL": "was killed (SIGKILL): a limit was hit or something killed it",
    "SIGXCPU": "exceeded its CPU-time limit (SIGXCPU)",
    "SIGSEGV": "crashed with a segmentation fault (SIGSEGV; very deep recursion?)",
    "SIGABRT": "aborted (SIGABRT; out of memory?)",
    "SIGXFSZ": "exceeded the file-size limit (SIGXFSZ)",
    "SIGBUS": "crashed with a bus error (SIGBUS)",
}


def ended_message(
    status: dict[str, Any] | None,
    reader: Any = None,
    who: str = "the candidate's process",
    when: str = "during the call",
) -> str:
    error = getattr(reader, "error", None)
    if error:
        return f"{who} sent an invalid frame {when}: {error}"
    if not status:
        return f"{who} ended {when} (it closed its result channel, or the sandbox died)"
    if "spawn_failed" in status:
        return f"{who} could not be started: {status['spawn_failed']}"
    if "exit_code" in status:
        return f"{who} exited with code {status['exit_code']} {when}"
    name = str(status.get("signal_name", "a signal"))
    return f"{who} {_SIGNALS.get(name, f'was killed by {name}')} {when}"


def timeout_message(timeout: float, what: str) -> str:
    return (
        f"timed out after {timeout:g} s (wall clock) during {what}; "
        "the sandbox and every process in it were killed"
    )
