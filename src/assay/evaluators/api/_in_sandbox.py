"""The program that runs inside the sandbox (never imported by assay itself).

The sandbox has a network namespace of its own: nothing outside is reachable, and its
loopback is private. This program listens on that loopback and relays every connection
to the mock server's Unix socket (mounted read-only into the sandbox), so the candidate's
code can reach the mock API at ``API_BASE_URL`` and nothing else. The candidate runs in a
forked process (output to a log, stopped at its time limit) while this one relays; then
one report line gives its exit status, its output and its log.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import sys
import time
import traceback
from typing import Any

PAYLOAD: dict[str, Any] = globals().get("PAYLOAD", {})
MARK = "\x1eassay-api "
LOG_TAIL = 4000
CHUNK = 65536


def main() -> None:
    try:  # before any candidate code runs: a failure here is the sandbox's
        sys.path.insert(0, PAYLOAD["site"])
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        socket.create_connection(listener.getsockname(), timeout=2).close()  # loopback up?
        listener.accept()[0].close()
        with socket.socket(socket.AF_UNIX) as probe:  # the mock reachable?
            probe.connect(PAYLOAD["socket"])
    except BaseException as exc:
        emit({"setup_error": f"{type(exc).__name__}: {exc}"})
        return
    emit({"ready": True})
    base = f"http://127.0.0.1:{listener.getsockname()[1]}{PAYLOAD['base_path']}"
    began = time.monotonic()
    pid = os.fork()
    if pid == 0:
        listener.close()
        os.setpgid(0, 0)
        for name, path in (("stdout.txt", 1), ("script.log", 2)):
            os.dup2(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), path)
        os._exit(run_candidate(base))
    exit_code, timed_out = relay(listener, pid, began + PAYLOAD["timeout"])
    report = {
        "exit": exit_code,
        "timed_out": timed_out,
        "base_url": base,
        "seconds": time.monotonic() - began,
        "stdout": tail("stdout.txt"),
        "log": tail("script.log"),
    }
    emit(report)


def emit(line: dict[str, Any]) -> None:
    sys.stdout.write(MARK + json.dumps(line) + "\n")
    sys.stdout.flush()


def run_candidate(base: str) -> int:
    os.environ["API_BASE_URL"] = base
    sys.argv = ["client.py", base]
    namespace = {"__name__": "__main__", "__file__": "client.py", "API_BASE_URL": base}
    try:
        exec(compile(PAYLOAD["code"], "client.py", "exec", dont_inherit=True), namespace)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except BaseException as exc:
        traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next if exc.__traceback__ else None)
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return 0


def relay(listener: socket.socket, pid: int, deadline: float) -> tuple[int, bool]:
    """Pump bytes between loopback clients and the mock's Unix socket until the
    candidate exits (or its time is up)."""
    chooser = selectors.DefaultSelector()
    chooser.register(listener, selectors.EVENT_READ, None)
    peers: dict[socket.socket, socket.socket] = {}
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), False
        if time.monotonic() >= deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(pid, 0)
            return -9, True
        for key, _ in chooser.select(timeout=0.01):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            if sock is listener:
                accept(listener, chooser, peers)
            else:
                forward(sock, chooser, peers)


def accept(
    listener: socket.socket, chooser: selectors.BaseSelector, peers: dict[socket.socket, socket.socket]
) -> None:
    client, _ = listener.accept()
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(PAYLOAD["socket"])
    except OSError:
        client.close()
        upstream.close()
        return
    peers[client], peers[upstream] = upstream, client
    chooser.register(client, selectors.EVENT_READ, None)
    chooser.register(upstream, selectors.EVENT_READ, None)


def forward(
    sock: socket.socket, chooser: selectors.BaseSelector, peers: dict[socket.socket, socket.socket]
) -> None:
    other = peers.get(sock)
    try:
        data = sock.recv(CHUNK)
    except OSError:
        data = b""
    if data and other is not None:
        try:
            other.sendall(data)
            return
        except OSError:
            pass
    for end in (sock, other):
        if end is not None and end in peers:
            chooser.unregister(end)
            peers.pop(end, None)
            end.close()


def tail(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()[-LOG_TAIL:]
    except OSError:
        return ""


if __name__ == "__main__":
    main()
