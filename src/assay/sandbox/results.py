"""What a sandboxed job reports back: plain data decided in the parent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Call",
    "CallOutcome",
    "CheckerRun",
    "FunctionRun",
    "LoadFailure",
    "Output",
    "ProgramRun",
    "ScriptRun",
    "StdioBuild",
    "StdioTestRun",
]


@dataclass(frozen=True)
class Call:
    """One call of the candidate function."""

    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass
class CallOutcome:
    """status: ``ok`` (``value`` holds the decoded return value), ``error`` (it raised),
    ``crashed`` (its process ended), ``timeout``, or ``not_run``. ``passed`` is set by a
    caller's ``on_outcome`` reducer, which may also replace ``value`` by a summary.
    ``duration_ms`` is measured here, from sending the call to its reply. ``cpu_ms`` is the
    kernel's count of the CPU time the candidate's sandbox used during the call (its
    cgroup's accounting: no code of the candidate's can change it) where the sandbox has
    a cgroup (``cpu_source="kernel"``); elsewhere, as ``wall_ms`` always, it is what the
    candidate's process measured for the call alone (its reply's ``time`` field:
    ``cpu_source="candidate"``, only as trustworthy as that process). ``wall_ms`` is never
    more than ``duration_ms``."""

    index: int
    status: str
    value: Any = None
    error_type: str | None = None
    message: str | None = None
    traceback: str | None = None
    duration_ms: float | None = None
    passed: bool | None = None
    wall_ms: float | None = None
    cpu_ms: float | None = None
    cpu_source: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class LoadFailure:
    """The code could not be loaded: ``syntax``, ``compile`` (the compiler's first lines
    in ``message``), ``exception`` (at import time), ``missing_function``, ``ended``
    (the process died), ``timeout``."""

    kind: str
    message: str
    error_type: str | None = None
    traceback: str | None = None


@dataclass
class Output:
    stdout: str = ""
    stderr: str = ""
    truncated: bool = False


@dataclass
class FunctionRun:
    outcomes: list[CallOutcome]
    load_failure: LoadFailure | None
    timed_out: bool
    output: Output
    sandbox: dict[str, Any]
    duration_ms: float
    restarts: int = 0
    compile_ms: float | None = None  # compiled languages: the compile step, measured by the parent
    compiles: int = 0  # compile steps that built: a restart reuses the job's first build


@dataclass
class ProgramRun:
    """``passed`` only when the test program ran to its end with every assertion true."""

    passed: bool
    verdict: dict[str, Any]
    timed_out: bool
    output: Output
    checker_output: Output
    sandbox: dict[str, Any]
    duration_ms: float
    # a compiled checker: from the start until it and the candidate were both built
    compile_ms: float | None = None


@dataclass
class ScriptRun:
    exit_code: int | None
    signal: str | None
    timed_out: bool
    output: Output
    sandbox: dict[str, Any]
    duration_ms: float
    compile_ms: float | None = None


@dataclass
class StdioTestRun:
    """One run of a stdin/stdout program on one test, as the parent saw it.

    ``timed_out``: ``"cpu"`` (over the limit by the kernel's count, or stopped by
    RLIMIT_CPU), ``"wall"`` (found idle past its wall-clock bound: asleep or blocked),
    or None. ``cpu_ms`` is the kernel's count: the sandbox's cgroup
    (``cpu_source="cgroup"``: every process of it) or the program's own rusage with its
    waited-for children (``"rusage"``). ``peak_memory_kb`` is (figure, source): the
    cgroup's peak over the test less the sandbox's usage before it (``"cgroup"``), or
    the program's peak resident size (``"rusage"``). ``memory_exceeded``: the kernel
    killed it at the memory limit (the cgroup's count), or its runtime said it could not
    allocate. ``output_exceeded``: it wrote more than the output limit (reading stopped
    there)."""

    exit_code: int | None
    signal: str | None
    timed_out: str | None
    wall_ms: float
    cpu_ms: float | None
    cpu_source: str | None
    peak_memory_kb: tuple[int | None, str | None]
    memory_exceeded: bool
    output_exceeded: bool
    stderr: str


@dataclass
class StdioBuild:
    """The program built once for all tests: ``error`` is the compiler's first lines."""

    error: str | None
    compile_ms: float | None = None


@dataclass
class CheckerRun:
    """A checker program's run on one test: its exit code (the verdict, see
    ``docs/programs.md``) and what it wrote."""

    exit_code: int | None
    signal: str | None
    timed_out: bool
    stdout: str
    stderr: str
