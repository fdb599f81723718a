"""The program that runs inside the sandbox (never imported by assay itself).

It writes the example's input files into the work folder, runs the candidate's script
in a forked process (its output to a log file, stopped at its time limit), then prints one
report line: the script's exit status, its log, the output file (base64; Parquet turned
into rows first), and every other file it created or changed. The trusted parent parses
and compares the output.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import sys
import time
import traceback
from typing import Any

PAYLOAD: dict[str, Any] = globals().get("PAYLOAD", {})
MARK = "\x1eassay-data "
LOG_TAIL = 4000


def main() -> None:
    try:  # before any candidate code runs: a failure here is the sandbox's
        sys.path.insert(0, PAYLOAD["site"])
        for name, data in PAYLOAD["inputs"].items():
            folder = os.path.dirname(name)
            if folder:
                os.makedirs(folder, exist_ok=True)
            with open(name, "wb") as handle:
                handle.write(base64.b64decode(data))
    except BaseException as exc:
        emit({"setup_error": f"{type(exc).__name__}: {exc}"})
        return
    emit({"ready": True})
    before = snapshot()
    exit_code, timed_out, seconds = run_script()
    after = snapshot()
    output = PAYLOAD["output"]
    changed = sorted(
        n for n, digest in after.items() if n != output and n != "script.log" and before.get(n) != digest
    )
    report = {
        "exit": exit_code,
        "timed_out": timed_out,
        "seconds": seconds,
        "log": tail("script.log"),
        "changed": changed,
        "inputs_changed": sorted(n for n in PAYLOAD["inputs"] if n in changed),
        "output": read_output(output),
    }
    emit(report)


def emit(line: dict[str, Any]) -> None:
    sys.stdout.write(MARK + json.dumps(line) + "\n")
    sys.stdout.flush()


def snapshot() -> dict[str, str]:
    found = {}
    for folder, _, files in os.walk("."):
        for name in files:
            path = os.path.normpath(os.path.join(folder, name))
            try:
                with open(path, "rb") as handle:
                    found[path] = hashlib.sha256(handle.read()).hexdigest()
            except OSError:
                found[path] = "unreadable"
    return found


def run_script() -> tuple[int, bool, float]:
    began = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        log = os.open("script.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os._exit(run_candidate())
    deadline = began + PAYLOAD["timeout"]
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), False, time.monotonic() - began
        if time.monotonic() >= deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(pid, 0)
            return -9, True, time.monotonic() - began
        time.sleep(0.005)


def run_candidate() -> int:
    sys.argv = ["transform.py", *PAYLOAD["inputs"], PAYLOAD["output"]]
    namespace = {"__name__": "__main__", "__file__": "transform.py"}
    try:
        exec(compile(PAYLOAD["code"], "transform.py", "exec", dont_inherit=True), namespace)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except BaseException as exc:  # shown without this runner's own frame
        traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next if exc.__traceback__ else None)
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return 0


def read_output(name: str) -> Any:
    if not os.path.isfile(name):
        return {"missing": True}
    if name.lower().endswith(".parquet"):
        return {"parquet": parquet_rows(name)}
    with open(name, "rb") as handle:
        return {"base64": base64.b64encode(handle.read()).decode()}


def parquet_rows(name: str) -> Any:
    import importlib

    try:
        parquet = importlib.import_module("pyarrow.parquet")
    except ImportError:
        return {"error": "pyarrow is not installed in the sandbox"}
    try:
        table = parquet.read_table(name)
        columns = table.column_names
        data = table.to_pylist()
        return {
            "columns": columns,
            "types": [str(t) for t in table.schema.types],
            "rows": [[plain(row.get(c)) for c in columns] for row in data],
        }
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}


def plain(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def tail(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()[-LOG_TAIL:]
    except OSError:
        return ""


if __name__ == "__main__":
    main()
