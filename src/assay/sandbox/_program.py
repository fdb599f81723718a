"""A test program against a candidate: two sandboxes joined by two pipes.

The candidate always runs in a fresh process. The test program runs in a fresh process
too, or, for Python on the namespace backends, in a resident checker (``_resident``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from assay.errors import UnsupportedModeError
from assay.sandbox import _declarations as declarations
from assay.sandbox import _shared_builds as shared_builds
from assay.sandbox._children import (
    DEFAULT_LIMITS,
    Child,
    bounded_text,
    collect_output,
    ended_status,
    finish,
    has_ended,
    next_frame,
    spawn_child,
)
from assay.sandbox._io import Session
from assay.sandbox._jobs import (
    COMPILE_SECONDS,
    RUN,
    checked_cpu_ms,
    compile_allowance,
    cpu_spent_ms,
    raise_if_not_started,
    shared_descriptor,
    shared_setup,
)
from assay.sandbox._messages import ended_message, timeout_message
from assay.sandbox._resident import REUSABLE_BACKENDS, Resident
from assay.sandbox._sandbox import Sandbox
from assay.sandbox._slots import JobHost, running_slot
from assay.sandbox.config import Limits
from assay.sandbox.languages import Language
from assay.sandbox.results import Output, ProgramRun


def run_test_program(
    pool: JobHost,
    language: Language,
    program: str,
    test: str,
    entry_point: str,
    timeout: float,
    limits: Limits = DEFAULT_LIMITS,
    prompt: str = "",
) -> ProgramRun:
    """``program`` (the candidate's code) runs in one sandbox; ``test`` runs in another, in
    a separate PID namespace, and each ``candidate(...)`` call crosses as plain data.

    If a reused checker ends without a verdict (it may have died between jobs), the whole
    job runs again once with fresh processes: that verdict must not depend on the past.
    The deadline starts once both sandboxes are ours."""
    if not language.test_programs:
        raise UnsupportedModeError(
            f"{language.name} runs test cases (arguments and expected results as data) "
            "and plain programs, not test programs"
        )
    started = time.monotonic()
    try:
        declaration = _declaration(language, prompt, program, entry_point)
    except declarations.DeclarationRefused as refused:
        return ProgramRun(
            passed=False,
            verdict={"passed": False, "stage": "load", "kind": "declaration", "message": str(refused)},
            timed_out=False,
            output=Output(),
            checker_output=Output(),
            sandbox={**pool.describe(), "limits": limits.describe(timeout)},
            duration_ms=(time.monotonic() - started) * 1000,
        )
    language.prepare()  # a first job may build the prebuilt harness parts: not its time
    started = time.monotonic()
    job = _Job(pool, language, program, test, entry_point, timeout, limits, prompt, declaration)
    attempt = job.run()
    if attempt.retry:
        attempt = job.run()
    return ProgramRun(
        passed=attempt.verdict.get("passed") is True and not attempt.timed_out,
        verdict=attempt.verdict,
        timed_out=attempt.timed_out,
        output=collect_output(attempt.candidate, Output()),
        checker_output=collect_output(attempt.checker, Output()),
        sandbox={**pool.describe(), "limits": limits.describe(timeout)},
        duration_ms=(time.monotonic() - started) * 1000,
        compile_ms=attempt.compile_ms,
    )


def _declaration(language: Language, prompt: str, program: str, entry_point: str) -> dict[str, Any] | None:
    """A compiled checker's proxy needs the entry point's declaration, read here in the
    trusted parent (see ``_declarations``)."""
    if language.name not in declarations.PARSERS:
        return None
    return declarations.checker_declaration(language.name, prompt, program, entry_point).frame()


@dataclass
class _Attempt:
    verdict: dict[str, Any]
    timed_out: bool = False
    candidate: Child | None = None
    checker: Any = None
    retry: bool = False
    compile_ms: float | None = None


@dataclass
class _Job:
    pool: JobHost
    language: Language
    program: str
    test: str
    entry_point: str
    timeout: float
    limits: Limits
    prompt: str
    declaration: dict[str, Any] | None = None

    def run(self) -> _Attempt:
        pool, limits = self.pool, self.limits
        setup = {
            "test": self.test,
            "entry_point": self.entry_point,
            "prompt": self.prompt,
            "max_value_bytes": limits.max_value_bytes,
            "declaration": self.declaration,
        }
        reuse = (
            pool.config.reuse_checker
            and self.language.name == "python"
            and pool.backend.name in REUSABLE_BACKENDS
        )
        language, builds = self.language.name, shared_builds.BUILDS
        candidate_key = shared_builds.key(language, "candidate", pool, limits, self.program, self.entry_point)
        # The test program's build holds the expected values: its key's role keeps it
        # apart, and its descriptor is handed to checker sandboxes only.
        sources = (self.test, self.entry_point, self.prompt, self.declaration)
        checker_key = shared_builds.key(language, "checker", pool, limits, *sources)
        with builds.claim(candidate_key) as c_claim:
            # the two sides compile at once: waiting for the test program's build pays
            # only when the candidate's needs none
            idle = c_claim is None or c_claim.found is not None
            with builds.claim(checker_key, wait=idle) as t_claim:
                return self._run(setup, reuse, (c_claim, t_claim))

    def _run(
        self,
        setup: dict[str, Any],
        reuse: bool,
        claims: tuple[shared_builds.Claim | None, shared_builds.Claim | None],
    ) -> _Attempt:
        pool, limits = self.pool, self.limits
        attempt = _Attempt(verdict={})
        keep = False
        with (
            running_slot(),
            pool.candidates.lease() as c_box,
            pool.checkers.lease() as t_box,
            Session() as session,
        ):
            deadline = time.monotonic() + self.timeout
            reused = reuse and t_box.resident is not None
            cpu = _CpuSpan(c_box.cpu_ns)
            try:
                attempt.candidate, calls, replies = _start_candidate(
                    session,
                    c_box,
                    self.language,
                    limits,
                    self.timeout,
                    deadline,
                    self.program,
                    self.entry_point,
                    claims[0],
                )
                attempt.checker = _start_checker(
                    session,
                    t_box,
                    self.language,
                    limits,
                    self.timeout,
                    setup,
                    calls,
                    replies,
                    reuse,
                    claims[1],
                )
                frame, attempt.timed_out, attempt.compile_ms, deadline = _await_verdict(
                    session,
                    attempt.checker,
                    attempt.candidate,
                    deadline,
                    self.timeout,
                    self.declaration is not None,
                    cpu,
                    claims,
                )
                cpu.stop()
                attempt.verdict = _verdict(
                    frame, attempt.timed_out, self.timeout, deadline, session, attempt.checker
                )
                cpu.check(attempt.verdict)
                keep = (
                    reuse
                    and not attempt.timed_out
                    and isinstance(frame, dict)
                    and frame.get("reusable") is True
                )
                attempt.retry = reused and attempt.verdict.get("kind") == "checker_ended"
            except _SetupTimeout:
                attempt.timed_out = True
                attempt.verdict = {
                    "passed": False,
                    "stage": "load",
                    "kind": "timeout",
                    "message": timeout_message(self.timeout, "starting the candidate"),
                }
            finally:
                _finish_pair(session, c_box, t_box, attempt.timed_out, keep)
        return attempt


class _SetupTimeout(Exception):
    pass


STARTED = {"event": "started"}  # a checker's first frame, once the candidate is loaded (and built)


class _CpuSpan:
    """The candidate sandbox's CPU time over the test, from the kernel's count (its
    cgroup): what the candidate's replies say about their own time is theirs to forge.
    Counted from the checker's go-ahead, when the candidate has loaded (and both sides
    are built) and waits for its first call."""

    def __init__(self, clock: Callable[[], int | None]) -> None:
        self.clock = clock
        self.began: int | None = None
        self.ended: int | None = None

    def restart(self) -> None:
        """The test starts now: what came before was compiling."""
        self.began = self.clock()

    def stop(self) -> None:
        if self.began is not None:
            self.ended = self.clock()

    def check(self, verdict: dict[str, Any]) -> None:
        spent = cpu_spent_ms(self.began, self.ended)
        if spent is None or not verdict:
            return
        reported = verdict.get("time")
        own = dict(reported) if isinstance(reported, dict) else {}
        figure = own.get("cpu_ms")
        claimed = float(figure) if isinstance(figure, (int, float)) and not isinstance(figure, bool) else None
        counted = verdict.get("calls")  # by the checker, not the candidate
        calls = counted if isinstance(counted, int) else 1
        own["cpu_ms"], own["cpu_source"] = checked_cpu_ms(claimed, spent, calls)
        verdict["time"] = own


def _await_verdict(
    session: Session,
    checker: Any,
    candidate: Child,
    deadline: float,
    timeout: float,
    compiled_checker: bool,
    cpu: _CpuSpan,
    claims: tuple[shared_builds.Claim | None, ...] = (),
) -> tuple[Any, bool, float | None, float]:
    """(verdict frame, timed out, compile ms, deadline). Every checker first says
    ``{"event": "started"}`` once the candidate is loaded, then waits for the go-ahead
    (so that its verdict never arrives together with that frame); the candidate's CPU
    count starts there. A compiled checker says it once both sides are built: compiling
    has its own allowance, and the test's time starts there too."""
    started = time.monotonic()
    if compiled_checker:
        deadline += COMPILE_SECONDS
    first, timed_out = _checker_frame(session, checker, candidate, deadline)
    for claim in claims:  # both compile steps are past: jobs waiting for their builds go on
        if claim is not None:
            claim.publish()
    if timed_out or first != STARTED:
        return first, timed_out, None, deadline
    now = time.monotonic()
    cpu.restart()
    session.send(checker.frames_in, RUN)
    if compiled_checker:
        deadline = now + timeout
    frame, timed_out = _checker_frame(session, checker, candidate, deadline)
    return frame, timed_out, (now - started) * 1000 if compiled_checker else None, deadline


def _checker_frame(session: Session, checker: Any, candidate: Child, deadline: float) -> tuple[Any, bool]:
    """The checker's next frame. Once the candidate's process has ended, what it left in
    its sandbox is killed at once (a reset): a process it forked may hold its reply pipe,
    and the checker would wait for that pipe's end until its time limit."""
    reader = checker.frames_out
    if not session.wait(lambda: reader.done or has_ended(checker) or has_ended(candidate), deadline):
        return None, True
    if not reader.done and not has_ended(checker):
        candidate.sandbox.begin_reset()
    return next_frame(session, checker, deadline)


def _start_candidate(
    session: Session,
    c_box: Sandbox,
    language: Language,
    limits: Limits,
    timeout: float,
    deadline: float,
    program: str,
    entry_point: str,
    claim: shared_builds.Claim | None,
) -> tuple[Child, int, int]:
    """The candidate, and the ends of its two pipes that the checker gets."""
    calls = session.pipe()
    replies = session.pipe()
    handed = shared_descriptor(session, claim)
    candidate = spawn_child(
        session,
        c_box,
        language,
        "candidate",
        limits,
        timeout + compile_allowance(language),
        calls=calls,
        replies=replies,
        extra_fds=[] if handed is None else [handed],
        read_frames=False,
    )
    # We write the setup frame first; the checker writes calls only after the candidate
    # answered "ready", which it does only after reading the whole setup.
    shared = shared_setup(claim, handed, first_fd=5)
    session.send(candidate.frames_in, {"code": program, "func_name": entry_point, **shared})
    if not session.wait(lambda: candidate.frames_in.flushed, deadline):
        raise _SetupTimeout()
    session.make_blocking(calls[1])
    return candidate, calls[1], replies[0]


def _start_checker(
    session: Session,
    t_box: Sandbox,
    language: Language,
    limits: Limits,
    timeout: float,
    setup: dict[str, Any],
    calls: int,
    replies: int,
    reuse: bool,
    claim: shared_builds.Claim | None = None,
) -> Any:
    if not reuse:
        if t_box.resident is not None:
            t_box.begin_reset()
        handed = shared_descriptor(session, claim)
        checker = spawn_child(
            session,
            t_box,
            language,
            "checker",
            limits,
            timeout + compile_allowance(language),
            extra_fds=[calls, replies] + ([] if handed is None else [handed]),
        )
        shared = shared_setup(claim, handed, first_fd=7)
        session.send(checker.frames_in, {**setup, **shared})
        return checker
    resident: Resident | None = t_box.resident
    if resident is None or not resident.usable_for(limits):
        t_box.begin_reset()
        resident = t_box.resident = Resident.start(t_box, limits)
    resident.attach(session)
    t_box.watch(resident.token)  # its exit ends the wait, whoever holds its pipes
    session.watch_sandbox(t_box)
    resident.submit(session, setup, calls, replies)
    session.release(calls)
    session.release(replies)
    return resident


def _finish_pair(session: Session, c_box: Sandbox, t_box: Sandbox, timed_out: bool, keep: bool) -> None:
    if timed_out:
        finish(session, [c_box, t_box], True)
        return
    finish(session, [c_box] if keep else [c_box, t_box], False)
    if keep:
        t_box.dirty = False  # only the resident runs there, ready for the next program


def _verdict(
    frame: Any, timed_out: bool, timeout: float, deadline: float, session: Session, checker: Any
) -> dict[str, Any]:
    if timed_out:
        return {
            "passed": False,
            "stage": "test",
            "kind": "timeout",
            "message": timeout_message(timeout, "the test program"),
        }
    if not isinstance(frame, dict):
        status = ended_status(session, checker, deadline)
        raise_if_not_started(status)
        return {
            "passed": False,
            "stage": "test",
            "kind": "checker_ended",
            "message": ended_message(status, checker.frames_out, who="the test program"),
        }
    verdict = {
        str(k): (bounded_text(v) if isinstance(v, str) else v) for k, v in frame.items() if k != "reusable"
    }
    verdict["passed"] = frame.get("passed") is True
    return verdict
