"""Python roles, run in a fresh fork of the zygote.

Descriptors: 1/2 stdout/stderr, 3 frames in, 4 frames out. The test-program roles are
in ``py_checker``.
"""

from __future__ import annotations

import io
import linecache
import os
import sys
import time
import traceback
import types
from collections.abc import Callable
from typing import Any

from . import codec, frames

FRAMES_IN, FRAMES_OUT = 3, 4
HARNESS_DIR = os.path.dirname(os.path.abspath(__file__))
# Bound once: code that patches ``time`` later does not change how the harness measures.
# The calling thread's CPU clock: the process clock is only updated at scheduler ticks
# once RLIMIT_CPU arms the process CPU timer (a call of 0.2 ms would read 0).
_wall, _cpu = time.perf_counter, time.thread_time


def run(role: str) -> int:
    if role in ("py_checker", "py_checker_loop"):
        from . import py_checker  # already imported by the zygote

        return py_checker.run(role)
    roles: dict[str, Callable[[], int]] = {
        "py_candidate": run_candidate,
        "py_script": run_script,
        "py_stdio": run_stdio,
    }
    return roles[role]()


def configure_streams() -> None:
    """Done once in the zygote: each child's stdout and stderr are these same objects on
    its own descriptors 1 and 2 (fresh stream objects in every child cost page copies)."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(encoding="utf-8", errors="backslashreplace", line_buffering=True)


def flush_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


# -- warming up, in the zygote -------------------------------------------------------------
WARM_UP_ROUNDS = 20  # past CPython's warm-up counts, so each function is quickened once
_SAMPLE: list[Any] = [
    None,
    True,
    3,
    -2.5,
    float("inf"),
    "text",
    b"\x00",
    (1, "a"),
    {1: [2.0]},
    {3},
    frozenset(),
    1j,
]


def warm_up() -> None:
    """Run the children's hot paths (frames, values, a call, a load, an error report) on
    made-up data in the zygote. CPython 3.11 rewrites a function's bytecode in place
    as it warms up and specializes; done once here, that is not a page copy in every
    fresh child. No job's data is involved."""
    read, write = os.pipe()
    try:
        for _ in range(WARM_UP_ROUNDS):
            frames.write_frame(write, {"args": codec.encode(_SAMPLE), "kwargs": codec.encode({"k": 1})})
            call = frames.read_frame(read) or {}
            _call(_echo, call)
            _call(_fail, call)
            load_module("def f():\n    return 1\n", "warm_up.py", "warm_up")
    finally:
        for fd in (read, write):
            os.close(fd)
            frames.forget(fd)
        sys.modules.pop("warm_up", None)
        linecache.cache.pop("warm_up.py", None)


def _echo(*args: Any, **kwargs: Any) -> Any:
    return codec.decode(codec.encode(list(args)))


def _fail(*args: Any, **kwargs: Any) -> Any:
    raise ValueError("warm-up")


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
    return {"error_type": type(exc).__name__, "message": safe_str(exc), "traceback": candidate_traceback(exc)}


def safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except BaseException:
        return f"<{type(exc).__name__} whose message cannot be shown>"


def candidate_traceback(exc: BaseException) -> str:
    """The traceback without the harness's own frames (dropped before any source line is
    looked up: reading the harness's files in every failing child is not free)."""
    try:
        entries = [
            (frame, line)
            for frame, line in traceback.walk_tb(exc.__traceback__)
            if not frame.f_code.co_filename.startswith(HARNESS_DIR)
        ]
        summary = traceback.StackSummary.extract(iter(entries))
        head = "Traceback (most recent call last):\n" if entries else ""
        return head + "".join(summary.format()) + "".join(traceback.format_exception_only(type(exc), exc))
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
        flush_streams()
        frames.write_frame(FRAMES_OUT, reply)


def _load_candidate(code: str, func_name: str) -> Callable[..., Any] | None:
    try:
        module = load_module(code, "solution.py", "solution")
    except SyntaxError as exc:
        flush_streams()
        frames.write_frame(FRAMES_OUT, {"event": "load_error", "kind": "syntax", **error_report(exc)})
        return None
    except BaseException as exc:
        flush_streams()
        frames.write_frame(FRAMES_OUT, {"event": "load_error", "kind": "exception", **error_report(exc)})
        return None
    function = module.__dict__.get(func_name)
    if not callable(function):
        flush_streams()
        frames.write_frame(FRAMES_OUT, _missing_function(module, func_name, function))
        return None
    flush_streams()
    frames.write_frame(FRAMES_OUT, {"event": "ready"})
    return function  # type: ignore[no-any-return]


def _missing_function(module: types.ModuleType, name: str, found: Any) -> dict[str, Any]:
    defined = sorted(
        k
        for k, v in module.__dict__.items()
        if callable(v) and not k.startswith("__") and getattr(v, "__module__", None) == "solution"
    )
    if found is None:
        message = f"the code defines no function named {name!r}"
        message += f" (it defines: {', '.join(defined)})" if defined else " (it defines none)"
    else:
        message = f"{name!r} is not a function (it is of type {type(found).__name__})"
    return {
        "event": "load_error",
        "kind": "missing_function",
        "error_type": "NameError",
        "message": message,
        "traceback": "",
    }


def _call(function: Callable[..., Any], call: dict[str, Any]) -> dict[str, Any]:
    try:
        args = codec.decode(call["args"])
        kwargs = codec.decode(call.get("kwargs") or {"$dict": []})
    except BaseException as exc:
        return {"ok": False, **error_report(exc)}
    wall, cpu = _wall(), _cpu()
    try:
        value = _resolve(function(*args, **kwargs))
    except BaseException as exc:  # SystemExit and KeyboardInterrupt are failures too
        return {"ok": False, **error_report(exc), "time": _elapsed(wall, cpu)}
    spent = _elapsed(wall, cpu)
    try:
        return {"ok": True, "value": codec.encode(value), "time": spent}
    except BaseException as exc:
        return {
            "ok": False,
            "error_type": "UnsupportedReturnValue",
            "message": f"the return value cannot leave the sandbox: {safe_str(exc)}",
            "traceback": "",
            "time": spent,
        }


def _elapsed(wall: float, cpu: float) -> dict[str, float]:
    """The reply's ``time`` field, the same in every language: the call alone (not decoding
    its arguments nor encoding its value), wall and CPU milliseconds of this process."""
    return {"wall_ms": (_wall() - wall) * 1000, "cpu_ms": (_cpu() - cpu) * 1000}


def remember_source(code: str, filename: str) -> None:
    """For tracebacks and the failing test line."""
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)


def load_module_into(code: str, filename: str, namespace: dict[str, Any]) -> None:
    remember_source(code, filename)
    exec(compile(code, filename, "exec", dont_inherit=True), namespace)


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
        flush_streams()
        return _exit_code(exc.code)
    except BaseException as exc:
        sys.stderr.write(candidate_traceback(exc))
        flush_streams()
        return 1
    flush_streams()
    return 0


def _exit_code(code: Any) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(f"{code}\n")
    return 1


def run_stdio() -> int:
    """A program reading standard input (descriptor 0 here, a pipe from the parent) and
    writing standard output, block-buffered as a plain ``python3`` would to a pipe."""
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8")
    sys.stdout.reconfigure(line_buffering=False)  # type: ignore[union-attr]
    return run_script()
