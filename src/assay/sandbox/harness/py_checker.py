"""The Python test-program process: runs ``check(candidate)`` where each call crosses to
the candidate's process, in another sandbox, as plain data.

One-shot (``py_checker``): descriptors 5 and 6 are the pipes to and from the candidate.
Resident (``py_checker_loop``): it serves one test program after another; descriptor 5
is a Unix socket on which each program's two candidate pipes arrive. Test programs are
trusted data, each runs in a fresh namespace, and after each one the process reports
whether interpreter-wide state is still as it started (``reusable``); if not, it exits
and the parent starts a fresh one.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # the C module: no enum per value
import builtins
import linecache
import os
import re
import resource
import signal
import socket
import sys
import traceback
from types import CodeType, ModuleType
from typing import Any

from . import codec, frames
from .py_roles import FRAMES_IN, FRAMES_OUT, error_report, flush_streams, remember_source

CANDIDATE_IN, CANDIDATE_OUT = 5, 6
PIPES_SOCKET = 5
# compiled here, in the zygote, not again in every child
_DEFINED = re.compile(r"^(?:async\s+def|def|class)\s+(\w+)|^(\w+)\s*=", re.MULTILINE)
_WORD = re.compile(r"\w+")
WATCHED_MODULES = (
    "builtins",
    "math",
    "re",
    "collections",
    "itertools",
    "functools",
    "heapq",
    "bisect",
    "string",
    "random",
    "copy",
    "json",
    "hashlib",
    "operator",
    "typing",
    "decimal",
    "os",
)


def run(role: str) -> int:
    return run_checker() if role == "py_checker" else run_checker_loop()


def run_checker() -> int:
    setup = frames.read_frame(FRAMES_IN)
    if setup is None:
        return 0
    verdict = check(setup, CANDIDATE_IN, CANDIDATE_OUT)
    flush_streams()
    frames.write_frame(FRAMES_OUT, verdict)
    return 0


def run_checker_loop() -> int:
    pipes = socket.socket(fileno=PIPES_SOCKET)
    baseline = fingerprint()
    while True:
        setup = frames.read_frame(FRAMES_IN)
        if setup is None:
            return 0
        _, fds, _, _ = socket.recv_fds(pipes, 16, 2)
        if len(fds) != 2:
            return 1
        try:
            verdict = check(setup, fds[0], fds[1])
        finally:
            for fd in fds:
                os.close(fd)
                frames.forget(fd)
        verdict["reusable"] = fingerprint() == baseline
        flush_streams()
        frames.write_frame(FRAMES_OUT, verdict)
        if not verdict["reusable"]:
            return 0


_listdir, _getcwd, _environ = os.listdir, os.getcwd, os.environ  # immune to patching
_getsignal, _valid_signals = _signal.getsignal, _signal.valid_signals  # raw: no enum per call
_getitimer, _getrlimit = _signal.getitimer, resource.getrlimit


def fingerprint() -> Any:
    """What a test program could change that would outlive it in this process: the
    watched modules' contents, interpreter settings, signals, timers, limits, threads,
    child processes, the environment and the working folder. If even this fails, the
    answer is a value equal to nothing, so the process is not reused."""
    try:
        return _fingerprint()
    except BaseException:
        return object()


_SIGNALS = tuple(s for s in _valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP))
_RLIMITS = (resource.RLIMIT_CPU, resource.RLIMIT_DATA, resource.RLIMIT_NPROC, resource.RLIMIT_NOFILE)


def _fingerprint() -> tuple[Any, ...]:
    modules = tuple(
        (name, id(module), _contents(module))
        for name, module in ((n, sys.modules.get(n)) for n in WATCHED_MODULES)
    )
    return (
        modules,
        sys.getrecursionlimit(),
        tuple(sys.path),
        sys.gettrace(),
        sys.getprofile(),
        id(sys.stdout),
        id(sys.stderr),
        dict(_environ),
        _getcwd(),
        tuple(_listdir(".")),
        tuple(map(_getsignal, _SIGNALS)),  # the signal module's getsignal makes an enum of each
        _getitimer(signal.ITIMER_REAL),
        _getitimer(signal.ITIMER_VIRTUAL),
        tuple(map(_getrlimit, _RLIMITS)),
        len(_listdir("/proc/self/task")),
        _other_processes(),
        _decimal_context(),
        sorted(_listdir("/proc/self/fd")),
    )


def _contents(module: Any) -> tuple[int, ...] | None:
    """The identity of every value (identity, not equality: an object whose ``__eq__``
    says yes to anything would hide a change)."""
    return tuple(map(id, vars(module).values())) if isinstance(module, ModuleType) else None


def _decimal_context() -> str:
    module = sys.modules.get("decimal")
    return repr(module.getcontext()) if isinstance(module, ModuleType) else ""


def _other_processes() -> int:
    """Processes in our PID namespace besides us and the zygote (PID 1)."""
    return sum(1 for entry in _listdir("/proc") if entry.isdigit()) - 2


class CandidateEnded(BaseException):
    """The candidate's process is gone or sent garbage. A BaseException so that a test's
    ``except Exception`` cannot swallow it."""


class CandidateError(RuntimeError):
    """The candidate raised an exception that is not a built-in one."""


class CandidateProxy:
    """Stands in for the candidate function: each call crosses to the candidate's process
    as plain data, and only plain data comes back."""

    def __init__(self, name: str, value_limit: int, calls: int, replies: int) -> None:
        self.__name__ = name
        self.calls = 0
        self.time = {"wall_ms": 0.0, "cpu_ms": 0.0}  # the sum of the replies' ``time``
        self.value_limit = value_limit
        self._calls_fd = calls
        self._replies_fd = replies

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        message = {"args": codec.encode(list(args)), "kwargs": codec.encode(kwargs)}
        try:
            frames.write_frame(self._calls_fd, message)
            reply = frames.read_frame(self._replies_fd, self.value_limit)
        except (OSError, frames.FrameError) as exc:
            raise CandidateEnded(f"the candidate's process ended or misbehaved ({exc})") from None
        if reply is None:
            raise CandidateEnded("the candidate's process ended during a call")
        if not isinstance(reply, dict):
            raise CandidateEnded("the candidate sent a malformed reply")
        self._add_time(reply.get("time"))
        if reply.get("ok") is True:
            try:
                return codec.decode(reply.get("value"))
            except (codec.MalformedValue, TypeError, ValueError) as exc:
                raise CandidateEnded(f"the candidate sent malformed data: {exc}") from None
        raise _exception_for(reply)

    def _add_time(self, spent: Any) -> None:
        for key in self.time:
            value = spent.get(key) if isinstance(spent, dict) else None
            # a forged reply may carry NaN or Infinity, which the verdict frame cannot
            if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e12:
                self.time[key] += value


# Raised by a candidate, these would stop the test's iteration instead of failing it:
# ``all(map(candidate, inputs))`` would end early and pass.
_ITERATION_CONTROL = ("StopIteration", "StopAsyncIteration", "GeneratorExit")


def _exception_for(reply: dict[str, Any]) -> BaseException:
    name = str(reply.get("error_type", "Exception"))
    message = str(reply.get("message", ""))
    builtin = getattr(builtins, name, None)
    if name in _ITERATION_CONTROL:
        return CandidateError(f"{name}: {message}")
    if isinstance(builtin, type) and issubclass(builtin, Exception):
        try:
            return builtin(message)
        except Exception:
            pass
    return CandidateError(f"{name}: {message}")


def check(setup: dict[str, Any], calls: int, replies: int) -> dict[str, Any]:
    test, prompt, entry_point = setup["test"], setup.get("prompt") or "", setup["entry_point"]
    compiled = _compiled(test, prompt, entry_point)  # while the candidate loads its code
    try:
        first = frames.read_frame(replies)
    except (OSError, frames.FrameError) as exc:
        first = {"event": "load_error", "kind": "ended", "message": str(exc)}
    if first is None:
        return {
            "passed": False,
            "stage": "load",
            "kind": "ended",
            "message": "the candidate's process ended before it was ready",
        }
    if first.get("event") != "ready":
        return {
            "passed": False,
            "stage": "load",
            **{k: first.get(k) for k in ("kind", "error_type", "message", "traceback")},
        }
    # the candidate is loaded: the parent starts counting its sandbox's CPU time, then
    # gives the go-ahead (so that the verdict never arrives together with this frame)
    frames.write_frame(FRAMES_OUT, {"event": "started"})
    if frames.read_frame(FRAMES_IN) is None:
        return {"passed": False, "stage": "test", "kind": "ended", "message": "no go-ahead came"}
    proxy = CandidateProxy(
        entry_point, int(setup.get("max_value_bytes") or frames.MAX_FRAME_BYTES), calls, replies
    )
    namespace: dict[str, Any] = {"__name__": "__test__"}
    if compiled is not None and compiled.helpers is not None:
        _run_helpers(prompt, compiled.helpers, namespace)
    namespace[entry_point] = proxy
    try:
        remember_source(test, "test.py")
        # a test that does not compile is compiled again here, to fail as before
        exec(compiled.test if compiled else compile(test, "test.py", "exec", dont_inherit=True), namespace)
        check = namespace.get("check")
        if callable(check):
            _finish(check(proxy))
    except BaseException as exc:
        return {"passed": False, "stage": "test", "calls": proxy.calls, "time": proxy.time, **_failure(exc)}
    return {"passed": True, "calls": proxy.calls, "time": proxy.time}


class _Compiled:
    """A test program compiled once: code objects are immutable, and each run executes
    them in a fresh namespace."""

    __slots__ = ("helpers", "test")

    def __init__(self, test: CodeType, helpers: CodeType | None) -> None:
        self.test = test
        self.helpers = helpers


CACHE_SIZE = 256  # more than HumanEval's 164 problems: n samples each cycle through them
_cache: dict[tuple[str, str, str], _Compiled] = {}


def _compiled(test: str, prompt: str, entry_point: str) -> _Compiled | None:
    """The compiled test program (None if it does not compile: not cached, so that its
    error is raised afresh where the test runs)."""
    key = (test, prompt, entry_point)
    found = _cache.get(key)
    if found is not None:
        return found
    try:
        code = compile(test, "test.py", "exec", dont_inherit=True)
    except BaseException:
        return None
    found = _Compiled(code, _helpers_code(prompt, test, entry_point))
    if len(_cache) >= CACHE_SIZE:
        del _cache[next(iter(_cache))]
    _cache[key] = found
    return found


def _helpers_code(prompt: str, test: str, entry_point: str) -> CodeType | None:
    """The prompt, compiled, when the test uses one of its helpers (HumanEval's ``poly``,
    ``encode_cyclic``); None when it uses none or the prompt does not compile."""
    helpers = {name for pair in _DEFINED.findall(prompt) for name in pair if name}
    helpers.discard(entry_point)
    if not helpers & set(_WORD.findall(test)):
        return None
    try:
        return compile(prompt, "prompt.py", "exec", dont_inherit=True)
    except BaseException:
        return None


def _run_helpers(prompt: str, code: CodeType, namespace: dict[str, Any]) -> None:
    """A prompt that does not run on its own is skipped."""
    remember_source(prompt, "prompt.py")
    try:
        exec(code, namespace)
    except BaseException:
        pass


def _finish(result: Any) -> None:
    """An ``async def check`` returns a coroutine: its assertions run only when awaited."""
    if not hasattr(type(result), "__await__"):  # inspect.isawaitable, without inspect
        return
    try:
        import asyncio  # rare: kept out of the zygote, whose size every fork copies
    except ImportError:  # the runtime is unreadable to this uid: drive it by hand
        steps = result.__await__()
        while True:
            try:
                steps.send(None)
            except StopIteration:
                return

    async def wait() -> Any:
        return await result

    asyncio.run(wait())


def _failure(exc: BaseException) -> dict[str, Any]:
    report = error_report(exc)
    report["kind"] = {
        AssertionError: "assertion",
        CandidateEnded: "candidate_ended",
        CandidateError: "candidate_error",
    }.get(type(exc), "exception")
    line = _test_line(exc)
    if line is not None:
        report["line"], report["source"] = line
    return report


def _test_line(exc: BaseException) -> tuple[int, str] | None:
    found = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == "test.py":
            found = line
    if found is None:
        return None
    return found, linecache.getline("test.py", found).strip()
