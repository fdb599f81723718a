"""Python roles, run in a fresh fork of the zygote.

Descriptors: 1/2 stdout/stderr, 3 frames in, 4 frames out; the checker also has
5 (calls to the candidate) and 6 (the candidate's replies).
"""

from __future__ import annotations

import builtins
import io
import linecache
import os
import re
import sys
import traceback
import types
from typing import Any, Callable, Optional

from . import codec, frames

FRAMES_IN, FRAMES_OUT, CANDIDATE_IN, CANDIDATE_OUT = 3, 4, 5, 6
# compiled here, in the zygote, not again in every child
_DEFINED = re.compile(r"^(?:async\s+def|def|class)\s+(\w+)|^(\w+)\s*=", re.MULTILINE)
_WORD = re.compile(r"\w+")
HARNESS_DIR = os.path.dirname(os.path.abspath(__file__))


def run(role: str) -> int:
    roles: dict[str, Callable[[], int]] = {
        "py_candidate": run_candidate,
        "py_checker": run_checker,
        "py_script": run_script,
    }
    return roles[role]()


def configure_streams() -> None:
    """Done once in the zygote: each child's stdout and stderr are these same objects on
    its own descriptors 1 and 2 (fresh stream objects in every child cost page copies)."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(encoding="utf-8", errors="backslashreplace", line_buffering=True)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


# -- loading code ---------------------------------------------------------------------
def load_module(code: str, filename: str, module_name: str) -> types.ModuleType:
    """Compile and execute ``code`` as module ``module_name`` with readable tracebacks."""
    lines = code.splitlines(keepends=True)
    linecache.cache[filename] = (len(code), None, lines, filename)
    compiled = compile(code, filename, "exec", dont_inherit=True)
    module = types.ModuleType(module_name)
    module.__file__ = filename
    sys.modules[module_name] = module
    exec(compiled, module.__dict__)
    return module


def error_report(exc: BaseException) -> dict[str, Any]:
    return {"error_type": type(exc).__name__, "message": safe_str(exc),
            "traceback": candidate_traceback(exc)}


def safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except BaseException:
        return f"<{type(exc).__name__} whose message cannot be shown>"


def candidate_traceback(exc: BaseException) -> str:
    """The traceback without the harness's own frames (dropped before any source line is
    looked up: reading the harness's files in every failing child is not free)."""
    try:
        entries = [(frame, line) for frame, line in traceback.walk_tb(exc.__traceback__)
                   if not frame.f_code.co_filename.startswith(HARNESS_DIR)]
        summary = traceback.StackSummary.extract(iter(entries))
        head = "Traceback (most recent call last):\n" if entries else ""
        return (head + "".join(summary.format())
                + "".join(traceback.format_exception_only(type(exc), exc)))
    except BaseException:
        return f"{type(exc).__name__}: {safe_str(exc)}\n"


def _resolve(value: Any) -> Any:
    if isinstance(value, types.CoroutineType):
        import asyncio  # rare: kept out of the zygote, whose size every fork copies

        return asyncio.run(value)
    return value


# -- the candidate ----------------------------------------------------------------------
def run_candidate() -> int:
    setup = frames.read_frame(FRAMES_IN)
    if setup is None:
        return 0
    function = _load_candidate(setup["code"], setup["func_name"])
    if function is None:
        return 0
    while True:
        call = frames.read_frame(FRAMES_IN)
        if call is None:
            return 0
        reply = _call(function, call)
        _flush()
        frames.write_frame(FRAMES_OUT, reply)


def _load_candidate(code: str, func_name: str) -> Optional[Callable[..., Any]]:
    try:
        module = load_module(code, "solution.py", "solution")
    except SyntaxError as exc:
        _flush()
        frames.write_frame(FRAMES_OUT, {"event": "load_error", "kind": "syntax",
                                        **error_report(exc)})
        return None
    except BaseException as exc:
        _flush()
        frames.write_frame(FRAMES_OUT, {"event": "load_error", "kind": "exception",
                                        **error_report(exc)})
        return None
    function = module.__dict__.get(func_name)
    if not callable(function):
        _flush()
        frames.write_frame(FRAMES_OUT, _missing_function(module, func_name, function))
        return None
    _flush()
    frames.write_frame(FRAMES_OUT, {"event": "ready"})
    return function  # type: ignore[no-any-return]


def _missing_function(module: types.ModuleType, name: str, found: Any) -> dict[str, Any]:
    defined = sorted(k for k, v in module.__dict__.items()
                     if callable(v) and not k.startswith("__") and
                     getattr(v, "__module__", None) == "solution")
    if found is None:
        message = f"the code defines no function named {name!r}"
        message += f" (it defines: {', '.join(defined)})" if defined else " (it defines none)"
    else:
        message = f"{name!r} is not a function (it is of type {type(found).__name__})"
    return {"event": "load_error", "kind": "missing_function", "error_type": "NameError",
            "message": message, "traceback": ""}


def _call(function: Callable[..., Any], call: dict[str, Any]) -> dict[str, Any]:
    try:
        args = codec.decode(call["args"])
        kwargs = codec.decode(call.get("kwargs") or {"$dict": []})
        value = _resolve(function(*args, **kwargs))
    except BaseException as exc:  # SystemExit and KeyboardInterrupt are failures too
        return {"ok": False, **error_report(exc)}
    try:
        return {"ok": True, "value": codec.encode(value)}
    except BaseException as exc:
        return {"ok": False, "error_type": "UnsupportedReturnValue",
                "message": f"the return value cannot leave the sandbox: {safe_str(exc)}",
                "traceback": ""}


# -- the checker (test program) -----------------------------------------------------------
class CandidateEnded(BaseException):
    """The candidate's process is gone or sent garbage. A BaseException so that a test's
    ``except Exception`` cannot swallow it."""


class CandidateError(RuntimeError):
    """The candidate raised an exception that is not a built-in one."""


class CandidateProxy:
    """Stands in for the candidate function: each call crosses to the candidate's process
    as plain data, and only plain data comes back."""

    def __init__(self, name: str, value_limit: int) -> None:
        self.__name__ = name
        self.calls = 0
        self.value_limit = value_limit

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        message = {"args": codec.encode(list(args)), "kwargs": codec.encode(kwargs)}
        try:
            frames.write_frame(CANDIDATE_IN, message)
            reply = frames.read_frame(CANDIDATE_OUT, self.value_limit)
        except (OSError, frames.FrameError) as exc:
            raise CandidateEnded(f"the candidate's process ended or misbehaved ({exc})") from None
        if reply is None:
            raise CandidateEnded("the candidate's process ended during a call")
        if not isinstance(reply, dict):
            raise CandidateEnded("the candidate sent a malformed reply")
        if reply.get("ok") is True:
            try:
                return codec.decode(reply.get("value"))
            except (codec.MalformedValue, TypeError, ValueError) as exc:
                raise CandidateEnded(f"the candidate sent malformed data: {exc}") from None
        raise _exception_for(reply)


def _exception_for(reply: dict[str, Any]) -> BaseException:
    name = str(reply.get("error_type", "Exception"))
    message = str(reply.get("message", ""))
    builtin = getattr(builtins, name, None)
    if isinstance(builtin, type) and issubclass(builtin, Exception):
        try:
            return builtin(message)
        except Exception:
            pass
    return CandidateError(f"{name}: {message}")


def run_checker() -> int:
    setup = frames.read_frame(FRAMES_IN)
    if setup is None:
        return 0
    verdict = _check(setup)
    _flush()
    frames.write_frame(FRAMES_OUT, verdict)
    return 0


def _check(setup: dict[str, Any]) -> dict[str, Any]:
    try:
        first = frames.read_frame(CANDIDATE_OUT)
    except (OSError, frames.FrameError) as exc:
        first = {"event": "load_error", "kind": "ended", "message": str(exc)}
    if first is None:
        return {"passed": False, "stage": "load", "kind": "ended",
                "message": "the candidate's process ended before it was ready"}
    if first.get("event") != "ready":
        return {"passed": False, "stage": "load", **{k: first.get(k) for k in
                ("kind", "error_type", "message", "traceback")}}
    proxy = CandidateProxy(setup["entry_point"],
                           int(setup.get("max_value_bytes") or frames.MAX_FRAME_BYTES))
    namespace: dict[str, Any] = {"__name__": "__test__"}
    _run_prompt(setup.get("prompt") or "", setup["test"], setup["entry_point"], namespace)
    namespace[setup["entry_point"]] = proxy
    try:
        load_module_into(setup["test"], "test.py", namespace)
        check = namespace.get("check")
        if callable(check):
            check(proxy)
    except BaseException as exc:
        return {"passed": False, "stage": "test", "calls": proxy.calls, **_failure(exc)}
    return {"passed": True, "calls": proxy.calls}


def _run_prompt(prompt: str, test: str, entry_point: str, namespace: dict[str, Any]) -> None:
    """The prompt's helpers (HumanEval's ``poly``, ``encode_cyclic``) for the test program,
    when the test uses any; a prompt that does not run on its own is skipped."""
    helpers = {name for pair in _DEFINED.findall(prompt) for name in pair if name}
    helpers.discard(entry_point)
    if not helpers & set(_WORD.findall(test)):
        return
    try:
        load_module_into(prompt, "prompt.py", namespace)
    except BaseException:
        pass


def load_module_into(code: str, filename: str, namespace: dict[str, Any]) -> None:
    lines = code.splitlines(keepends=True)
    linecache.cache[filename] = (len(code), None, lines, filename)
    exec(compile(code, filename, "exec", dont_inherit=True), namespace)


def _failure(exc: BaseException) -> dict[str, Any]:
    report = error_report(exc)
    report["kind"] = {AssertionError: "assertion", CandidateEnded: "candidate_ended",
                      CandidateError: "candidate_error"}.get(type(exc), "exception")
    line = _test_line(exc)
    if line is not None:
        report["line"], report["source"] = line
    return report


def _test_line(exc: BaseException) -> Optional[tuple[int, str]]:
    found = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == "test.py":
            found = line
    if found is None:
        return None
    return found, linecache.getline("test.py", found).strip()


# -- a plain program ---------------------------------------------------------------------
def run_script() -> int:
    setup = frames.read_frame(FRAMES_IN)
    if setup is None:
        return 0
    sys.argv = ["main.py"]
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": "main.py"}
    try:
        load_module_into(setup["code"], "main.py", namespace)
    except SystemExit as exc:
        _flush()
        return _exit_code(exc.code)
    except BaseException as exc:
        sys.stderr.write(candidate_traceback(exc))
        _flush()
        return 1
    _flush()
    return 0


def _exit_code(code: Any) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(f"{code}\n")
    return 1
