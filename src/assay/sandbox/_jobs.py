"""The three jobs a pool runs: call a function on inputs, run a test program against a
candidate, run a plain program. Each spawns fresh children in warm sandboxes, talks to
them only through pipes, and decides everything from the plain data they send back."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence

from assay.sandbox._io import Capture, FrameReader, FrameWriter, Session
from assay.sandbox._messages import ended_message, timeout_message
from assay.sandbox._sandbox import Sandbox
from assay.sandbox.config import Limits
from assay.sandbox.errors import SandboxError
from assay.sandbox.harness import codec
from assay.sandbox.languages import Language
from assay.sandbox.results import (
    Call,
    CallOutcome,
    FunctionRun,
    LoadFailure,
    Output,
    ProgramRun,
    ScriptRun,
)

if TYPE_CHECKING:
    from assay.sandbox._pool import SandboxPool

EXIT_GRACE_SECONDS = 0.5
DEFAULT_LIMITS = Limits()  # frozen, safe to share
DRAIN_SECONDS = 1.0


@dataclass
class Child:
    """A spawned process as the parent sees it."""

    sandbox: Sandbox
    token: str
    stdout: Capture
    stderr: Capture
    frames_in: FrameWriter
    frames_out: Optional[FrameReader]

    def exit_status(self) -> Optional[dict[str, Any]]:
        return self.sandbox.exits.get(self.token)


def _spawn(session: Session, sandbox: Sandbox, language: Language, role: str, limits: Limits,
           timeout: float, *, calls: Optional[tuple[int, int]] = None,
           replies: Optional[tuple[int, int]] = None, extra_fds: Sequence[int] = (),
           read_frames: bool = True, watch: bool = False) -> Child:
    """Descriptors in the child: 1 stdout, 2 stderr, 3 frames in, 4 frames out, then
    ``extra_fds``. ``calls``/``replies`` supply the frame pipes instead of fresh ones."""
    out_r, out_w = session.pipe()
    err_r, err_w = session.pipe()
    in_r, in_w = calls or session.pipe()
    frames_r, frames_w = replies or session.pipe()
    spec = language.spawn(role, sandbox.harness_root, sandbox.settings.runtime,
                          limits.memory_bytes)
    handed = [out_w, err_w, in_r, frames_w, *extra_fds]
    token = sandbox.spawn(spec.role, handed, limits.for_timeout(timeout), spec.argv, watch)
    for fd in handed:
        session.release(fd)
    session.watch_sandbox(sandbox)
    return Child(
        sandbox, token,
        stdout=session.capture(out_r, limits.max_output_bytes),
        stderr=session.capture(err_r, limits.max_output_bytes),
        frames_in=session.writer(in_w),
        frames_out=session.reader(frames_r, limits.max_value_bytes) if read_frames else None,
    )


def _next_frame(session: Session, child: Child, deadline: float) -> tuple[Any, bool]:
    """(frame or None if the process ended, timed_out)."""
    reader = child.frames_out
    assert reader is not None
    if not session.wait(lambda: reader.done or child.sandbox.dead, deadline):
        return None, True
    return (reader.frames.popleft() if reader.frames else None), False


def _ended_status(session: Session, child: Child, deadline: float) -> Optional[dict[str, Any]]:
    """How the child ended (its frames stopped): asked for, briefly waited for."""
    try:
        child.sandbox.watch(child.token)
    except SandboxError:
        return None
    grace = min(deadline, time.monotonic() + EXIT_GRACE_SECONDS)
    session.wait(lambda: child.exit_status() is not None or child.sandbox.dead, grace)
    return child.exit_status()


def _finish(session: Session, sandboxes: Sequence[Sandbox], timed_out: bool) -> None:
    """On timeout, kill the whole sandbox (the parent's decision, not the candidate's).
    Otherwise collect the output already written (a child flushes before each frame it
    sends) and start the reset, which kills whatever the job left behind."""
    if timed_out:
        for sandbox in sandboxes:
            sandbox.kill()
        session.drain(time.monotonic() + DRAIN_SECONDS)
        return
    session.drain_available()
    for sandbox in sandboxes:
        try:
            sandbox.begin_reset()
        except SandboxError:
            sandbox.kill()


def _output(child: Optional[Child], before: Output) -> Output:
    if child is None:
        return before
    return Output(before.stdout + child.stdout.text(), before.stderr + child.stderr.text(),
                  before.truncated or child.stdout.truncated or child.stderr.truncated)


# -- a function on inputs (test-case mode) ---------------------------------------------------
def run_function(pool: "SandboxPool", language: Language, code: str, func_name: str,
                 calls: Sequence[Call], timeout: float, limits: Limits = DEFAULT_LIMITS) -> FunctionRun:
    """Call ``func_name`` from ``code`` once per call. Expected outputs never enter the
    sandbox: only arguments go in, only encoded return values come out. If the process
    dies during a call, a fresh one takes the remaining calls."""
    started = time.monotonic()
    deadline = started + timeout
    state = _FunctionState(len(calls), timeout)
    with pool.candidates.lease() as sandbox:
        while not state.finished:
            with Session() as session:
                child = _spawn(session, sandbox, language, "candidate", limits, timeout)
                try:
                    _drive_candidate(session, child, code, func_name, calls, state, deadline)
                finally:
                    _finish(session, [sandbox], state.timed_out)
                    state.output = _output(child, state.output)
            if sandbox.dead and not state.finished and not state.timed_out:
                state.fail_rest("the sandbox died")
    return FunctionRun(
        outcomes=state.outcomes(), load_failure=state.load_failure, timed_out=state.timed_out,
        output=state.output, sandbox={**pool.describe(), "limits": limits.describe(timeout)},
        duration_ms=(time.monotonic() - started) * 1000, restarts=state.restarts,
    )


class _FunctionState:
    def __init__(self, total: int, timeout: float) -> None:
        self.total = total
        self.timeout = timeout
        self.results: list[Optional[CallOutcome]] = [None] * total
        self.next = 0
        self.load_failure: Optional[LoadFailure] = None
        self.timed_out = False
        self.restarts = -1
        self.output = Output()

    @property
    def finished(self) -> bool:
        return self.timed_out or self.load_failure is not None or self.next >= self.total

    def fail_rest(self, reason: str) -> None:
        for index in range(self.next, self.total):
            self.results[index] = CallOutcome(index, "not_run", message=reason)
        self.next = self.total

    def outcomes(self) -> list[CallOutcome]:
        return [r or CallOutcome(i, "not_run", message="not run") for i, r in enumerate(self.results)]


def _drive_candidate(session: Session, child: Child, code: str, func_name: str,
                     calls: Sequence[Call], state: _FunctionState, deadline: float) -> None:
    state.restarts += 1
    session.send(child.frames_in, {"code": code, "func_name": func_name})
    first, timed_out = _next_frame(session, child, deadline)
    if timed_out:
        state.timed_out = True
        state.load_failure = LoadFailure("timeout", timeout_message(state.timeout, "loading the code"))
        return
    if first is None or first.get("event") != "ready":
        state.load_failure = _load_failure(first, _ended_status(session, child, deadline))
        return
    while state.next < state.total:
        index = state.next
        call = calls[index]
        sent = time.monotonic()
        session.send(child.frames_in, {"args": codec.encode(list(call.args)),
                                       "kwargs": codec.encode(dict(call.kwargs))})
        reply, timed_out = _next_frame(session, child, deadline)
        elapsed = (time.monotonic() - sent) * 1000
        state.next += 1
        if timed_out:
            state.results[index] = CallOutcome(index, "timeout", duration_ms=elapsed,
                                               message=timeout_message(state.timeout, f"call {index}"))
            state.timed_out = True
            state.fail_rest("not run: the time limit was reached earlier")
            return
        if reply is None:
            status = _ended_status(session, child, deadline)
            state.results[index] = CallOutcome(index, "crashed", duration_ms=elapsed,
                                               message=ended_message(status, child.frames_out))
            return  # a fresh process takes the remaining calls
        state.results[index] = _outcome(index, reply, elapsed)


def _outcome(index: int, reply: Any, elapsed: float) -> CallOutcome:
    if not isinstance(reply, dict):
        return CallOutcome(index, "error", error_type="ProtocolError",
                           message="malformed reply from the sandbox", duration_ms=elapsed)
    if reply.get("ok") is True:
        try:
            value = codec.decode(reply.get("value"))
        except (codec.MalformedValue, TypeError, ValueError) as exc:
            return CallOutcome(index, "error", error_type="ProtocolError",
                               message=f"malformed value from the sandbox: {exc}",
                               duration_ms=elapsed)
        return CallOutcome(index, "ok", value=value, duration_ms=elapsed)
    return CallOutcome(index, "error", error_type=_text(reply.get("error_type")),
                       message=_text(reply.get("message")),
                       traceback=_text(reply.get("traceback")), duration_ms=elapsed)


def _text(value: Any) -> Optional[str]:
    return None if value is None else str(value)[:20000]


def _load_failure(frame: Any, status: Optional[dict[str, Any]]) -> LoadFailure:
    if not isinstance(frame, dict):
        return LoadFailure("ended", ended_message(status, None, when="before it was ready"))
    return LoadFailure(
        kind=str(frame.get("kind", "exception")), message=_text(frame.get("message")) or "",
        error_type=_text(frame.get("error_type")), traceback=_text(frame.get("traceback")),
    )


# -- a test program against a candidate --------------------------------------------------
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
            frame, timed_out = _next_frame(session, checker_child, deadline)
            verdict = _verdict(frame, timed_out, timeout, deadline, session, checker_child)
        except _SetupTimeout:
            timed_out = True
            verdict = {"passed": False, "stage": "load", "kind": "timeout",
                       "message": timeout_message(timeout, "starting the candidate")}
        finally:
            _finish(session, [c_box, t_box], timed_out)
    return ProgramRun(
        passed=verdict.get("passed") is True and not timed_out, verdict=verdict,
        timed_out=timed_out, output=_output(candidate_child, Output()),
        checker_output=_output(checker_child, Output()),
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
    candidate = _spawn(session, c_box, language, "candidate", limits, timeout,
                       calls=calls, replies=replies, read_frames=False)
    # We write the setup frame first; the checker writes calls only after the candidate
    # answered "ready", which it does only after reading the whole setup.
    session.send(candidate.frames_in, {"code": program, "func_name": entry_point})
    if not session.wait(lambda: candidate.frames_in.flushed, deadline):
        raise _SetupTimeout()
    session.make_blocking(calls[1])
    checker = _spawn(session, t_box, language, "checker", limits, timeout,
                     extra_fds=[calls[1], replies[0]])
    return candidate, checker


def _verdict(frame: Any, timed_out: bool, timeout: float, deadline: float, session: Session,
             checker: Child) -> dict[str, Any]:
    if timed_out:
        return {"passed": False, "stage": "test", "kind": "timeout",
                "message": timeout_message(timeout, "the test program")}
    if not isinstance(frame, dict):
        status = _ended_status(session, checker, deadline)
        return {"passed": False, "stage": "test", "kind": "checker_ended",
                "message": ended_message(status, checker.frames_out, who="the test program")}
    verdict = {str(k): (_text(v) if isinstance(v, str) else v) for k, v in frame.items()}
    verdict["passed"] = frame.get("passed") is True
    return verdict


# -- a plain program ----------------------------------------------------------------------
def run_script(pool: "SandboxPool", language: Language, code: str, timeout: float,
               limits: Limits = DEFAULT_LIMITS) -> ScriptRun:
    """Run ``code`` as a program; its exit code and output are the result."""
    started = time.monotonic()
    deadline = started + timeout
    with pool.candidates.lease() as sandbox, Session() as session:
        child = _spawn(session, sandbox, language, "script", limits, timeout,
                       read_frames=False, watch=True)
        session.send(child.frames_in, {"code": code})
        child.frames_in.close_when_flushed = True
        finished = session.wait(lambda: child.exit_status() is not None or sandbox.dead,
                                deadline)
        status = child.exit_status() or {}
        _finish(session, [sandbox], not finished)
    return ScriptRun(
        exit_code=status.get("exit_code"), signal=status.get("signal_name"),
        timed_out=not finished, output=_output(child, Output()),
        sandbox={**pool.describe(), "limits": limits.describe(timeout)},
        duration_ms=(time.monotonic() - started) * 1000,
    )
