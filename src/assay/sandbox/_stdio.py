"""Whole programs on standard input and output, judged test by test.

A ``StdioJudge`` holds a candidate sandbox (and, with a checker program, a second one)
for all the tests of one candidate: the program is built once there, then each test runs
it in a fresh child with the test's input streamed to its descriptor 0 and its output
streamed to the caller's sink. Between tests the zygote kills whatever the test left
running but keeps the built program (``sweep``). A checker program runs in its own
sandbox and reads the input, the candidate's output and the expected answer as files;
the candidate never sees the answer, the checker, or anything of the checker's.
"""

from __future__ import annotations

import json
import math
import time
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import Any, BinaryIO

from assay.errors import SandboxError, UnsupportedModeError
from assay.sandbox import _toolchains as toolchains
from assay.sandbox._io import FrameReader, Session
from assay.sandbox._jobs import COMPILE_SECONDS, raise_if_not_started
from assay.sandbox._sandbox import Sandbox
from assay.sandbox._slots import JobHost, running_slot
from assay.sandbox._streams import Drain, Feeder, Kept, OutputSink
from assay.sandbox.config import MIB, Limits
from assay.sandbox.languages import Language
from assay.sandbox.results import CheckerRun, StdioBuild, StdioTestRun

# a program still running at WALL_FACTOR x its CPU limit + WALL_SLACK is asleep or blocked
WALL_FACTOR = 2.0
WALL_SLACK_SECONDS = 1.0
WALL_CAP_FACTOR = 10  # a busy program's wall-clock bound moves on at most this many times
BUSY_SHARE = 0.05  # CPU over a bound's span, as a share of it, that counts as still working
CPU_CHECK_SECONDS = 0.1  # how often the sandbox's CPU count is read while a test runs
DRAIN_SECONDS = 2.0  # after it exited and was swept: the pipes hold what it wrote
STDERR_KEPT = 64 * 1024
CHECKER_SECONDS = 10.0
CHECKER_LIMITS = Limits(memory_bytes=1024 * MIB, max_file_bytes=1024 * MIB)
BUILD_LIMITS = Limits(memory_bytes=1024 * MIB, max_processes=64, max_file_bytes=256 * MIB)
FILES_BOOT = (
    "import sys; sys.path.insert(0, {root!r}); from harness.stdio_files import main; sys.exit(main())"
)
# what runtimes write when an allocation fails under an address-space or data limit
OUT_OF_MEMORY = (
    b"MemoryError",
    b"std::bad_alloc",
    b"OutOfMemoryError",
    b"heap out of memory",
    b"runtime: out of memory",
    b"fatal error: runtime: cannot allocate memory",
)
STDIO_LANGUAGES = ("python", "javascript", "cpp", "go", "java")
# the JVM's own memory (code cache, metaspace, thread stacks) beside its heap: Java gets
# the memory limit as its heap (-Xmx), and its process this much more
JVM_OVERHEAD = 256 * MIB


@dataclass(frozen=True)
class Program:
    """How a test starts the program: a fork of the Python zygote given the code, or the
    command the build reported (it runs from the build's folder)."""

    role: str
    argv: list[str]
    code: str = ""


class StdioJudge:
    """Use as a context manager: ``build`` once, then ``run`` (and ``check``) per test."""

    def __init__(
        self,
        pool: JobHost,
        language: Language,
        code: str,
        limits: Limits,
        checker: tuple[Language, str] | None = None,
    ) -> None:
        for lang in (language, *([checker[0]] if checker else [])):
            if lang.name not in STDIO_LANGUAGES:
                raise UnsupportedModeError(
                    f"{lang.name} does not run stdin/stdout programs here; these do: {', '.join(STDIO_LANGUAGES)}"
                )
        self.pool = pool
        self.language = language
        self.code = code
        self.limits = _for_language(language, limits)
        self.heap = limits.memory_bytes
        self.checker_source = checker
        self._stack = ExitStack()
        self.box: Sandbox | None = None
        self.checker_box: Sandbox | None = None
        self.program: Program | None = None
        self.checker: Program | None = None

    def __enter__(self) -> StdioJudge:
        self._stack.__enter__()
        try:
            self._stack.enter_context(running_slot())
            self._lease()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _lease(self) -> None:
        self.box = self._stack.enter_context(self.pool.candidates.lease())
        if self.checker_source is not None:
            self.checker_box = self._stack.enter_context(self.pool.checkers.lease())

    # -- building -------------------------------------------------------------------
    def build(self) -> StdioBuild:
        """The candidate (compiled once); then the checker program, whose compile
        error is the dataset's (``SandboxError`` would hide it: a ``CheckerError``)."""
        assert self.box is not None
        self.language.prepare()
        built = _build(self.box, self.language, self.code, self.heap)
        if isinstance(built, StdioBuild):
            return built
        self.program, compile_ms = built
        return StdioBuild(None, compile_ms)

    def build_checker(self) -> str | None:
        """None, or the checker's compile error."""
        if self.checker_source is None:
            return None
        assert self.checker_box is not None
        language, code = self.checker_source
        built = _build(self.checker_box, language, code, CHECKER_LIMITS.memory_bytes, as_checker=True)
        if isinstance(built, StdioBuild):
            return built.error
        self.checker = built[0]
        return None

    # -- one test -----------------------------------------------------------------------
    def run(self, stdin: BinaryIO, sink: OutputSink, time_limit: float) -> StdioTestRun:
        assert self.box is not None and self.program is not None
        return _run_test(self.box, self.program, self.limits, stdin, sink, time_limit)

    def check(self, input_: BinaryIO, output: BinaryIO, answer: BinaryIO) -> CheckerRun:
        assert self.checker_box is not None and self.checker is not None
        return _run_checker(self.checker_box, self.checker, input_, output, answer)


def _build(
    box: Sandbox, language: Language, code: str, memory: int | None, as_checker: bool = False
) -> tuple[Program, float | None] | StdioBuild:
    if language.name == "python" and not as_checker:
        return Program("py_stdio", [], code), None  # forked warm from the zygote, per test
    runtime = box.settings.runtime
    heap = memory * 2 if memory else None  # the JVM's -Xmx is half of what it is given
    options = json.loads(toolchains.compile_options(heap, box.harness_root))
    options["node"] = runtime.node or "node"
    boot = toolchains.BUILD_BOOT.format(root=box.harness_root)
    python = toolchains.system_python() or runtime.python
    argv = [python, "-I", "-S", "-B", "-c", boot, language.name, "build", json.dumps(options)]
    started = time.monotonic()
    with Session() as session:
        out_r, out_w = session.pipe()
        in_r, in_w = session.pipe()
        frames_r, frames_w = session.pipe()
        handed = [out_w, out_w, in_r, frames_w]  # the compiler's output is in its frame
        token = box.spawn("exec", handed, BUILD_LIMITS.for_timeout(COMPILE_SECONDS), argv, watch=True)
        for fd in (out_w, in_r, frames_w):
            session.release(fd)
        session.watch_sandbox(box)
        kept = Kept(STDERR_KEPT)
        session.watch_stream(Drain(out_r, kept))
        writer = session.writer(in_w)
        reader = session.reader(frames_r, 1 << 20)
        session.send(writer, {"code": code}, close_after=True)
        done = session.wait(lambda: reader.done or box.dead, started + COMPILE_SECONDS)
        frame = reader.frames.popleft() if reader.frames else None
        if not done:
            box.kill()
            return StdioBuild(f"the build took longer than {COMPILE_SECONDS:g} s")
        if not isinstance(frame, dict) or frame.get("event") != "built":
            raise_if_not_started(box.exits.get(token))
            return StdioBuild(_build_error(frame, kept, reader))
    box.sweep()
    compile_ms = (time.monotonic() - started) * 1000 if language.compiled else None
    built = [str(part) for part in frame.get("argv") or []]
    if language.name == "javascript" and memory:
        # V8 then fails with its own "heap out of memory" before the limit bites
        built = [built[0], f"--max-old-space-size={max(16, memory * 3 // 4 // MIB)}", *built[1:]]
    return Program("exec", built), compile_ms


def _build_error(frame: Any, kept: Kept, reader: FrameReader) -> str:
    if isinstance(frame, dict) and frame.get("kind") == "compile":
        return str(frame.get("message") or "")[:20000]
    said = kept.text().strip()
    return "the build ended without a program" + (f": {said[:2000]}" if said else "")


def _for_language(language: Language, limits: Limits) -> Limits:
    if language.name == "java" and limits.memory_bytes:
        return replace(limits, memory_bytes=limits.memory_bytes + JVM_OVERHEAD)
    return limits


def _test_limits(limits: Limits, time_limit: float) -> Limits:
    """RLIMIT_CPU a second past the limit: the kernel stops a program that spins."""
    return replace(limits, cpu_seconds=math.ceil(time_limit) + 1)


def _run_test(
    box: Sandbox, program: Program, limits: Limits, stdin: BinaryIO, sink: OutputSink, time_limit: float
) -> StdioTestRun:
    cgroup = box.cgroup
    oom_before = cgroup.oom_kills() if cgroup is not None else None
    base = cgroup.reset_peak() if cgroup is not None else None
    test_limits = _test_limits(limits, time_limit)
    with Session() as session:
        in_r, in_w = session.pipe()
        out_r, out_w = session.pipe()
        err_r, err_w = session.pipe()
        handed, targets = [in_r, out_w, err_w], [0, 1, 2]
        frames_w = None
        if program.role == "py_stdio":
            frames_r, frames_w = session.pipe()
            handed, targets = [*handed, frames_r], [*targets, 3]
        box.finish_reset()
        cpu_before = box.cpu_ns()
        started = time.monotonic()
        token = box.spawn(
            program.role,
            handed,
            test_limits.for_timeout(time_limit),
            program.argv,
            watch=True,
            targets=targets,
        )
        for fd in handed:
            session.release(fd)
        session.watch_sandbox(box)
        if frames_w is not None:
            session.send(session.writer(frames_w), {"code": program.code}, close_after=True)
        session.watch_stream(Feeder(in_w, stdin), writing=True)
        output = Drain(out_r, sink)
        errors = Kept(STDERR_KEPT)
        error_drain = Drain(err_r, errors)
        session.watch_stream(output)
        session.watch_stream(error_drain)
        ended = _await_exit(session, box, token, started, time_limit, cpu_before)
        wall_ms = (time.monotonic() - started) * 1000
        status = dict(box.exits.get(token) or {})
        cpu_after = box.cpu_ns()
        box.sweep()  # whatever it left running dies here, so its pipes reach their end
        session.wait(lambda: output.eof and error_drain.eof, time.monotonic() + DRAIN_SECONDS)
    raise_if_not_started(status)
    cpu_ms, cpu_source = _cpu(cpu_before, cpu_after, status)
    oom = cgroup is not None and (cgroup.oom_kills() or 0) > (oom_before or 0)
    timed_out = _timed_out(ended, status, cpu_ms, time_limit)
    return StdioTestRun(
        exit_code=status.get("exit_code"),
        signal=status.get("signal_name"),
        timed_out=timed_out,
        wall_ms=wall_ms,
        cpu_ms=cpu_ms,
        cpu_source=cpu_source,
        peak_memory_kb=_peak_kb(cgroup, base, status),
        memory_exceeded=oom or (timed_out is None and _says_out_of_memory(status, errors)),
        output_exceeded=output.overflowed,
        stderr=errors.text(),
    )


def _peak_kb(cgroup: Any, base: int | None, status: dict[str, Any]) -> tuple[int | None, str | None]:
    """The cgroup's peak over the test less what the sandbox held before it; else the
    program's own peak resident size (which keeps the zygote's fork it began as)."""
    peak = cgroup.peak() if cgroup is not None and base is not None else None
    if peak is not None and base is not None:
        return max(0, peak - base) // 1024, "cgroup"
    own = status.get("max_rss_kb")
    return (int(own), "rusage") if isinstance(own, int) else (None, None)


def _await_exit(
    session: Session, box: Sandbox, token: str, started: float, time_limit: float, cpu_before: int | None
) -> str:
    """How the test ended: ``"exited"``; ``"cpu"`` once the kernel's count shows the
    sandbox's processes together past the CPU limit (RLIMIT_CPU counts one process: a
    fork bomb's processes each stay under it while together they spin for as long as
    the wall-clock bound lets them); or ``"wall"``, found idle past its wall-clock bound.
    On a loaded machine a busy program gets less than a CPU: while the kernel's count
    shows it still working the bound moves on, up to ``WALL_CAP_FACTOR`` times. A
    program asleep or blocked makes no progress and is stopped at the first bound."""
    ended = lambda: token in box.exits or box.dead  # noqa: E731
    step = time_limit * WALL_FACTOR + WALL_SLACK_SECONDS
    bound, last = started + step, box.cpu_ns()
    check = CPU_CHECK_SECONDS if cpu_before is not None else step
    while not session.wait(ended, min(bound, time.monotonic() + check)):
        now = box.cpu_ns()
        if now is not None and cpu_before is not None and now - cpu_before > time_limit * 1e9:
            return "cpu"
        if time.monotonic() < bound:
            continue
        idle = last is None or now is None or (now - last) / 1e9 < step * BUSY_SHARE
        if idle or bound - started >= step * WALL_CAP_FACTOR:
            return "wall"
        bound, last = bound + step, now
    return "exited"


def _cpu(before: int | None, after: int | None, status: dict[str, Any]) -> tuple[float | None, str | None]:
    if before is not None and after is not None and after >= before:
        return (after - before) / 1e6, "cgroup"
    own = status.get("cpu_ms")
    return (float(own), "rusage") if isinstance(own, (int, float)) else (None, None)


def _timed_out(ended: str, status: dict[str, Any], cpu_ms: float | None, time_limit: float) -> str | None:
    if ended != "exited":
        return ended
    if status.get("signal_name") == "SIGXCPU" or (cpu_ms is not None and cpu_ms > time_limit * 1000):
        return "cpu"
    return None


def _says_out_of_memory(status: dict[str, Any], errors: Kept) -> bool:
    """Under an address-space or data limit an allocation fails inside the program: its
    runtime says so on stderr (a program could print that itself: it gains nothing,
    the verdict is a failure either way)."""
    failed = status.get("exit_code") not in (0, None) or status.get("signal_name") is not None
    return failed and any(marker in errors.data for marker in OUT_OF_MEMORY)


def _run_checker(
    box: Sandbox, checker: Program, input_: BinaryIO, output: BinaryIO, answer: BinaryIO
) -> CheckerRun:
    boot = FILES_BOOT.format(root=box.harness_root)
    python = toolchains.system_python() or box.settings.runtime.python
    argv = [python, "-I", "-S", "-B", "-c", boot, json.dumps(checker.argv)]
    limits = CHECKER_LIMITS
    with Session() as session:
        out_r, out_w = session.pipe()
        err_r, err_w = session.pipe()
        streams = [session.pipe() for _ in range(3)]
        handed = [out_w, err_w, *(read for read, _ in streams)]
        box.finish_reset()
        started = time.monotonic()
        token = box.spawn("exec", handed, limits.for_timeout(CHECKER_SECONDS), argv, watch=True)
        for fd in handed:
            session.release(fd)
        session.watch_sandbox(box)
        for (_, write), source in zip(streams, (input_, output, answer)):
            session.watch_stream(Feeder(write, source), writing=True)
        said, errors = Kept(STDERR_KEPT), Kept(STDERR_KEPT)
        drains = [Drain(out_r, said), Drain(err_r, errors)]
        for drain in drains:
            session.watch_stream(drain)
        exited = session.wait(lambda: token in box.exits or box.dead, started + CHECKER_SECONDS)
        status = dict(box.exits.get(token) or {})
        if box.dead:
            raise SandboxError("the checker's sandbox died")
        box.sweep()
        session.wait(lambda: all(d.eof for d in drains), time.monotonic() + DRAIN_SECONDS)
    raise_if_not_started(status)
    return CheckerRun(
        exit_code=status.get("exit_code"),
        signal=status.get("signal_name"),
        timed_out=not exited,
        stdout=said.text(),
        stderr=errors.text(),
    )
