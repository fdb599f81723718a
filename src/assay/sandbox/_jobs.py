"""Two of the jobs a pool runs: call a function on inputs (test-case mode) and run a plain
program (the third, a test program, is in ``_program``). Each spawns fresh children in
warm sandboxes, talks to them only through pipes, and decides everything from the plain
data they send back."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from assay.errors import SandboxError, SandboxStartError
from assay.sandbox import _shared_builds as shared_builds
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
from assay.sandbox._slots import JobHost, running_slot
from assay.sandbox.config import Limits
from assay.sandbox.harness import codec
from assay.sandbox.languages import Language
from assay.sandbox.results import Call, CallOutcome, FunctionRun, LoadFailure, Output, ScriptRun

Reducer = Callable[[CallOutcome], CallOutcome]
COMPILE_SECONDS = 60.0
# after {"event": "compiled"} a compiled language's process waits for this go-ahead: its
# next frame then never arrives together with that one, and the run's clock starts here
RUN = {"event": "run"}


# -- a function on inputs (test-case mode) ---------------------------------------------------
def run_function(
    pool: JobHost,
    language: Language,
    code: str,
    func_name: str,
    calls: Sequence[Call],
    timeout: float,
    limits: Limits = DEFAULT_LIMITS,
    on_outcome: Reducer | None = None,
    call_timeouts: Sequence[float] | None = None,
) -> FunctionRun:
    """Call ``func_name`` from ``code`` once per call. Expected outputs never enter the
    sandbox: only arguments go in, only encoded return values come out. If the process
    dies during a call, a fresh one takes the remaining calls.

    ``on_outcome`` reduces each outcome as it arrives (say, to a verdict and a short
    text), so the decoded values of many calls are never held at once. The deadline
    starts once the sandbox is ours: waiting for one (or for a CPU, or for the previous
    job's cleanup) is not the candidate's time. ``call_timeouts`` (one per call) bound
    each call as well: a call that overruns its own limit is a timeout, as with the
    whole run's. A sandbox found dead before the candidate was ready (killed from
    outside while idle) is replaced and the job runs once more."""
    language.prepare()  # a first job may build the prebuilt harness parts: not its time
    job = _FunctionJob(language, code, func_name, calls, timeout, limits, on_outcome, call_timeouts)
    key = shared_builds.key(language.name, "candidate", pool, limits, code, func_name)
    try:
        with shared_builds.BUILDS.claim(key) as claim:
            return _run_function_once(pool, job, claim)
    except _DiedBeforeReady:
        with shared_builds.BUILDS.claim(key) as claim:
            return _run_function_once(pool, job, claim)  # a second death is the caller's to see


@dataclass(frozen=True)
class _FunctionJob:
    """What ``run_function`` was asked to do, as one record (it may run twice)."""

    language: Language
    code: str
    func_name: str
    calls: Sequence[Call]
    timeout: float
    limits: Limits
    on_outcome: Reducer | None
    call_timeouts: Sequence[float] | None


class _DiedBeforeReady(SandboxError):
    """The zygote had ended before the candidate said it was ready: no call ran."""


def _run_function_once(pool: JobHost, job: _FunctionJob, claim: shared_builds.Claim | None) -> FunctionRun:
    started = time.monotonic()
    language, limits, timeout = job.language, job.limits, job.timeout
    state = _FunctionState(len(job.calls), timeout, job.on_outcome)
    state.call_timeouts = list(job.call_timeouts) if job.call_timeouts is not None else None
    with running_slot(), pool.candidates.lease() as sandbox:
        state.deadline = time.monotonic() + timeout
        state.cpu_clock = sandbox.cpu_ns
        while not state.finished:
            with Session() as session:
                # a restart runs the job's kept build (see harness/kept_build)
                handed = shared_descriptor(session, claim) if state.build is None else None
                child = spawn_child(
                    session,
                    sandbox,
                    language,
                    "candidate",
                    limits,
                    timeout + compile_allowance(language),
                    extra_fds=[] if handed is None else [handed],
                )
                shared = shared_setup(claim, handed, first_fd=5)
                going_on = False  # an error ends the job: its build must not outlive it
                try:
                    _drive_candidate(session, child, job, state, shared, claim)
                    going_on = state.build is not None and not state.finished
                finally:
                    finish(session, [sandbox], state.timed_out, keep_build=going_on)
                    state.output = collect_output(child, state.output)
            unanswered = not state.finished or state.load_failure is not None
            if unanswered and not state.timed_out and sandbox.zygote_exited():
                # its zygote never runs job code: killed from outside (or a bug), so
                # not a verdict on the candidate; the caller may retry
                before_any = state.load_failure is not None and all(r is None for r in state.results)
                died = _DiedBeforeReady if before_any else SandboxError
                raise died(f"the sandbox died during the job{sandbox.death_note}")
    return FunctionRun(
        outcomes=state.outcomes(),
        load_failure=state.load_failure,
        timed_out=state.timed_out,
        output=state.output,
        sandbox={**pool.describe(), "limits": limits.describe(timeout)},
        duration_ms=(time.monotonic() - started) * 1000,
        restarts=state.restarts,
        compile_ms=state.compile_ms,
        compiles=state.compiles,
    )


class _FunctionState:
    def __init__(self, total: int, timeout: float, reduce: Reducer | None) -> None:
        self.total = total
        self.timeout = timeout
        self.reduce = reduce
        self.results: list[CallOutcome | None] = [None] * total
        self.next = 0
        self.load_failure: LoadFailure | None = None
        self.timed_out = False
        self.restarts = -1
        self.output = Output()
        self.deadline = 0.0
        self.compile_ms: float | None = None
        self.compiles = 0  # compile steps that built (a restart reuses the job's first build)
        self.build: str | None = None  # the kept build's digest (see harness/kept_build)
        self.shared: bool | None = None  # whether the compile step ran a shared build
        self.call_timeouts: list[float] | None = None
        self.cpu_clock: Callable[[], int | None] = lambda: None  # the sandbox's kernel count

    def call_deadline(self, index: int, sent: float, deadline: float) -> tuple[float, float]:
        """The deadline of call ``index`` and the limit a timeout message names."""
        if self.call_timeouts is None or sent + self.call_timeouts[index] >= deadline:
            return deadline, self.timeout
        return sent + self.call_timeouts[index], self.call_timeouts[index]

    @property
    def finished(self) -> bool:
        return self.timed_out or self.load_failure is not None or self.next >= self.total

    def fail_rest(self, reason: str) -> None:
        for index in range(self.next, self.total):
            self.results[index] = CallOutcome(index, "not_run", message=reason)
        self.next = self.total

    def record(self, outcome: CallOutcome) -> None:
        self.results[outcome.index] = self.reduce(outcome) if self.reduce else outcome

    def outcomes(self) -> list[CallOutcome]:
        return [r or CallOutcome(i, "not_run", message="not run") for i, r in enumerate(self.results)]


def shared_descriptor(session: Session, claim: shared_builds.Claim | None) -> int | None:
    """The descriptor a compile step gets for a shared build (see ``_shared_builds``): to
    export this one to, or to read the one built before. Ours is closed once the child
    has it (``spawn_child`` releases what it hands)."""
    fd = claim.descriptor() if claim is not None else None
    return None if fd is None else session.own(fd)


def shared_setup(claim: shared_builds.Claim | None, handed: int | None, first_fd: int) -> dict[str, Any]:
    """The setup frame's part about a shared build, ``handed`` being numbered
    ``first_fd`` in the child."""
    return {} if claim is None else claim.setup(handed, first_fd)


def _drive_candidate(
    session: Session,
    child: Child,
    job: _FunctionJob,
    state: _FunctionState,
    shared: dict[str, Any],
    claim: shared_builds.Claim | None,
) -> None:
    state.restarts += 1
    setup: dict[str, Any] = {"code": job.code, "func_name": job.func_name, "keep_build": True, **shared}
    if state.build is not None:
        setup["prebuilt"] = state.build
    session.send(child.frames_in, setup)
    first, timed_out = _compiled_first_frame(session, child, state, job.language)
    if claim is not None:
        claim.publish()  # the compile step is past: jobs waiting for this build go on
        if "shared" in shared and state.shared is False:
            claim.drop()  # it did not check out (changed, gone): later jobs build afresh
    deadline = state.deadline
    if timed_out:
        state.timed_out = True
        state.load_failure = LoadFailure("timeout", timeout_message(state.timeout, "loading the code"))
        return
    if not isinstance(first, dict) or first.get("event") != "ready":
        status = ended_status(session, child, deadline)
        raise_if_not_started(status)
        state.load_failure = _load_failure(first, status, child)
        return
    while state.next < state.total:
        index = state.next
        call = job.calls[index]
        cpu_before = state.cpu_clock()
        sent = time.monotonic()
        session.send(
            child.frames_in,
            {"args": codec.encode(list(call.args)), "kwargs": codec.encode(dict(call.kwargs))},
        )
        call_deadline, limit = state.call_deadline(index, sent, deadline)
        reply, timed_out = next_frame(session, child, call_deadline)
        elapsed = (time.monotonic() - sent) * 1000
        kernel_cpu_ms = cpu_spent_ms(cpu_before, state.cpu_clock())
        state.next += 1
        if timed_out:
            state.record(
                CallOutcome(
                    index,
                    "timeout",
                    duration_ms=elapsed,
                    message=timeout_message(limit, f"call {index}"),
                )
            )
            state.timed_out = True
            state.fail_rest("not run: the time limit was reached earlier")
            return
        if reply is None:
            status = ended_status(session, child, deadline)
            state.record(
                CallOutcome(
                    index, "crashed", duration_ms=elapsed, message=ended_message(status, child.frames_out)
                )
            )
            return  # a fresh process takes the remaining calls
        state.record(_outcome(index, reply, elapsed, kernel_cpu_ms, job.language.float32))


def cpu_spent_ms(before: int | None, after: int | None) -> float | None:
    """Milliseconds between two readings of a sandbox's kernel CPU count, or None."""
    if before is None or after is None or after < before:
        return None
    return (after - before) / 1e6


def compile_allowance(language: Language) -> float:
    """Wall seconds a compile step may take on top of the job's timeout (and the CPU
    limit of the compiler, which runs under the job's limits)."""
    return COMPILE_SECONDS if language.compiled else 0.0


def _compiled_first_frame(
    session: Session, child: Child, state: _FunctionState, language: Language
) -> tuple[Any, bool]:
    """The first frame after the compile step, if any. Compiling is not the candidate's
    running time: the parent measures it and moves the deadline by as much."""
    if not language.compiled:
        return next_frame(session, child, state.deadline)
    sent = time.monotonic()
    first, timed_out = next_frame(session, child, state.deadline + COMPILE_SECONDS)
    if not timed_out and isinstance(first, dict) and first.get("event") == "compiled":
        spent = time.monotonic() - sent
        state.compile_ms = (state.compile_ms or 0.0) + spent * 1000
        state.deadline += spent
        state.shared = first.get("shared") is True
        if first.get("reused") is not True:
            state.compiles += not state.shared  # a shared build was built before
            built = first.get("build")
            state.build = built if isinstance(built, str) else None
        session.send(child.frames_in, RUN)
        return next_frame(session, child, state.deadline)
    return first, timed_out


def _outcome(
    index: int, reply: Any, elapsed: float, kernel_cpu_ms: float | None, float32: bool
) -> CallOutcome:
    outcome = _outcome_of(index, reply, elapsed, float32)
    if isinstance(reply, dict):
        outcome.wall_ms, outcome.cpu_ms = reported_time(reply.get("time"))
        outcome.cpu_source = "candidate" if outcome.cpu_ms is not None else None
        if outcome.wall_ms is not None:
            outcome.wall_ms = min(outcome.wall_ms, elapsed)
    if kernel_cpu_ms is not None and outcome.status in ("ok", "error"):
        outcome.cpu_ms, outcome.cpu_source = checked_cpu_ms(outcome.cpu_ms, kernel_cpu_ms, 1)
    return outcome


# CPU time per call that a runtime's other threads (a JIT compiler, V8's helpers) and the
# harness's own decoding spend beside the call: the kernel counts it for the sandbox,
# the calling thread's clock does not.
CPU_SLACK_MS = 5.0


def checked_cpu_ms(reported: float | None, kernel_ms: float, calls: int) -> tuple[float, str]:
    """The CPU time of ``calls`` calls: the candidate's own figure (its calling thread,
    finer) where the kernel's count of its whole sandbox bears it out (not above it, nor
    below it by more than ``CPU_SLACK_MS`` a call): ``"checked"``; else the kernel's
    count: ``"kernel"``. A candidate that forges its clock gains at most the slack."""
    if reported is not None and kernel_ms - CPU_SLACK_MS * max(1, calls) <= reported <= kernel_ms:
        return reported, "checked"
    return round(kernel_ms, 6), "kernel"


def reported_time(spent: Any) -> tuple[float | None, float | None]:
    """``wall_ms`` and ``cpu_ms`` of a reply's ``time`` field, each None if absent or absurd."""
    if not isinstance(spent, dict):
        return None, None
    values = [spent.get(key) for key in ("wall_ms", "cpu_ms")]
    wall, cpu = (
        float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 1e12 else None
        for v in values
    )
    return wall, cpu


def _outcome_of(index: int, reply: Any, elapsed: float, float32: bool) -> CallOutcome:
    if not isinstance(reply, dict):
        return CallOutcome(
            index,
            "error",
            error_type="ProtocolError",
            message="malformed reply from the sandbox",
            duration_ms=elapsed,
        )
    if reply.get("ok") is True:
        try:
            value = codec.decode(reply.get("value"), float32=float32)
        except Exception as exc:  # noqa: BLE001 - whatever it sent, it is its failure
            return CallOutcome(
                index,
                "error",
                error_type="ProtocolError",
                message=f"the return value was refused: {bounded_text(exc)}",
                duration_ms=elapsed,
            )
        return CallOutcome(index, "ok", value=value, duration_ms=elapsed)
    return CallOutcome(
        index,
        "error",
        error_type=bounded_text(reply.get("error_type")),
        message=bounded_text(reply.get("message")),
        traceback=bounded_text(reply.get("traceback")),
        duration_ms=elapsed,
    )


def raise_if_not_started(status: dict[str, Any] | None) -> None:
    """The zygote could not start the process (no fork: the host is out of processes or
    memory): not the candidate's doing, so not a verdict on it."""
    if status and "spawn_failed" in status:
        raise SandboxStartError(f"the sandbox could not start a process: {status['spawn_failed']}")


def _load_failure(frame: Any, status: dict[str, Any] | None, child: Child) -> LoadFailure:
    if frame is None:
        return LoadFailure("ended", ended_message(status, child.frames_out, when="before it was ready"))
    if not isinstance(frame, dict):
        return LoadFailure("ended", "the candidate's process sent a malformed first frame")
    return LoadFailure(
        kind=bounded_text(frame.get("kind")) or "exception",
        message=bounded_text(frame.get("message")) or "",
        error_type=bounded_text(frame.get("error_type")),
        traceback=bounded_text(frame.get("traceback")),
    )


# -- a plain program ----------------------------------------------------------------------
def run_script(
    pool: JobHost, language: Language, code: str, timeout: float, limits: Limits = DEFAULT_LIMITS
) -> ScriptRun:
    """Run ``code`` as a program; its exit code and output are the result."""
    language.prepare()
    started = time.monotonic()
    with running_slot(), pool.candidates.lease() as sandbox, Session() as session:
        deadline = time.monotonic() + timeout
        child = spawn_child(
            session,
            sandbox,
            language,
            "script",
            limits,
            timeout + compile_allowance(language),
            read_frames=language.compiled,
        )
        session.send(child.frames_in, {"code": code}, close_after=not language.compiled)
        ended = lambda: child.exit_status() is not None or sandbox.dead  # noqa: E731
        compile_ms = None
        if language.compiled:
            compile_ms, deadline = _await_compiled(session, child, ended, deadline)
        finished = session.wait(ended, deadline)
        status = child.exit_status() or {}
        finish(session, [sandbox], not finished)
    return ScriptRun(
        exit_code=status.get("exit_code"),
        signal=status.get("signal_name"),
        timed_out=not finished,
        output=collect_output(child, Output()),
        sandbox={**pool.describe(), "limits": limits.describe(timeout)},
        duration_ms=(time.monotonic() - started) * 1000,
        compile_ms=compile_ms,
    )


def _await_compiled(
    session: Session, child: Child, ended: Callable[[], bool], deadline: float
) -> tuple[float | None, float]:
    """Wait out the compile step (a program that does not compile just exits): the
    program's time starts once it is built."""
    reader = child.frames_out
    assert reader is not None
    sent = time.monotonic()
    session.wait(lambda: bool(reader.frames) or reader.done or ended(), deadline + COMPILE_SECONDS)
    compiled = bool(reader.frames) and reader.frames.popleft() == {"event": "compiled"}
    spent = time.monotonic() - sent
    session.send(child.frames_in, RUN, close_after=True)
    return (spent * 1000, deadline + spent) if compiled else (None, deadline)
