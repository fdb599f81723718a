"""A test program against a candidate: two sandboxes joined by two pipes."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from assay.sandbox._children import (
    DEFAULT_LIMITS,
    Child,
    bounded_text,
    collect_output,
    ended_status,
    finish,
    next_frame,
    spawn_child,
)
from assay.sandbox._io import Session
from assay.sandbox._messages import ended_message, timeout_message
from assay.sandbox._sandbox import Sandbox
from assay.sandbox.config import Limits
from assay.sandbox.languages import Language
from assay.sandbox.results import Output, ProgramRun

if TYPE_CHECKING:
    from assay.sandbox._pool import SandboxPool

def run_test_program(pool: "SandboxPool", language: Language, program: str, test: str,
                     entry_point: str, timeout: float, limits: Limits = DEFAULT_LIMITS,
                     prompt: str = "") -> ProgramRun:
    """``program`` (the candidate's code) runs in one sandbox; ``test`` runs in another, in
    a separate PID namespace, and each ``candidate(...)`` call crosses as plain data."""
    started = time.monotonic()
    deadline = started + timeout
    verdict: dict[str, Any]
    timed_out = False
    candidate_child = checker_child = None
    with pool.candidates.lease() as c_box, pool.checkers.lease() as t_box, Session() as session:
        try:
            candidate_child, checker_child = _start_pair(
                session, c_box, t_box, language, limits, timeout, deadline, program, entry_point)
            session.send(checker_child.frames_in,
                         {"test": test, "entry_point": entry_point, "prompt": prompt,
                          "max_value_bytes": limits.max_value_bytes})
            frame, timed_out = next_frame(session, checker_child, deadline)
            verdict = _verdict(frame, timed_out, timeout, deadline, session, checker_child)
        except _SetupTimeout:
            timed_out = True
            verdict = {"passed": False, "stage": "load", "kind": "timeout",
                       "message": timeout_message(timeout, "starting the candidate")}
        finally:
            finish(session, [c_box, t_box], timed_out)
    return ProgramRun(
        passed=verdict.get("passed") is True and not timed_out, verdict=verdict,
        timed_out=timed_out, output=collect_output(candidate_child, Output()),
        checker_output=collect_output(checker_child, Output()),
        sandbox={**pool.describe(), "limits": limits.describe(timeout)},
        duration_ms=(time.monotonic() - started) * 1000,
    )


class _SetupTimeout(Exception):
    pass


def _start_pair(session: Session, c_box: Sandbox, t_box: Sandbox, language: Language,
                limits: Limits, timeout: float, deadline: float, program: str,
                entry_point: str) -> tuple[Child, Child]:
    calls = session.pipe()
    replies = session.pipe()
    candidate = spawn_child(session, c_box, language, "candidate", limits, timeout,
                       calls=calls, replies=replies, read_frames=False)
    # We write the setup frame first; the checker writes calls only after the candidate
    # answered "ready", which it does only after reading the whole setup.
    session.send(candidate.frames_in, {"code": program, "func_name": entry_point})
    if not session.wait(lambda: candidate.frames_in.flushed, deadline):
        raise _SetupTimeout()
    session.make_blocking(calls[1])
    checker = spawn_child(session, t_box, language, "checker", limits, timeout,
                     extra_fds=[calls[1], replies[0]])
    return candidate, checker


def _verdict(frame: Any, timed_out: bool, timeout: float, deadline: float, session: Session,
             checker: Child) -> dict[str, Any]:
    if timed_out:
        return {"passed": False, "stage": "test", "kind": "timeout",
                "message": timeout_message(timeout, "the test program")}
    if not isinstance(frame, dict):
        status = ended_status(session, checker, deadline)
        return {"passed": False, "stage": "test", "kind": "checker_ended",
                "message": ended_message(status, checker.frames_out, who="the test program")}
    verdict = {str(k): (bounded_text(v) if isinstance(v, str) else v) for k, v in frame.items()}
    verdict["passed"] = frame.get("passed") is True
    return verdict
