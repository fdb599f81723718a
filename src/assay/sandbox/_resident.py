"""A resident test-program process: one Python checker kept alive in a checker sandbox
across jobs, which saves a fork, a reset and the page copies of a fresh process per job.

Safe because a test program is trusted data and the candidate reaches the checker only
through plain values; each program runs in a fresh namespace, and after each one the
checker reports whether anything interpreter-wide changed (``harness/py_checker.py``).
It is replaced when it says so, when anything went wrong (timeout, crash, garbage,
truncated output), when the job's limits differ, and after ``MAX_USES`` programs. The
candidate always gets a fresh process.
"""

from __future__ import annotations

import fcntl
import os
import select
import socket
from typing import Any

from assay.sandbox._io import Capture, FrameReader, FrameWriter, Session
from assay.sandbox._sandbox import Sandbox
from assay.sandbox.config import Limits

MAX_USES = 1000
REUSABLE_BACKENDS = ("bubblewrap", "unshare")  # its cleanliness check needs a PID namespace


def _nonblocking(fd: int) -> None:
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)


def _limits_key(limits: Limits) -> tuple[Any, ...]:
    return (
        limits.memory_bytes,
        limits.max_processes,
        limits.max_file_bytes,
        limits.max_open_files,
        limits.max_output_bytes,
        limits.max_value_bytes,
    )


class Resident:
    def __init__(
        self, sandbox: Sandbox, token: str, limits: Limits, fds: dict[str, int], pipes: socket.socket
    ) -> None:
        self.sandbox = sandbox
        self.token = token
        self.key = _limits_key(limits)
        self.uses = 0
        self._fds = fds
        self.pipes = pipes
        self.frames_in = FrameWriter(fds["in"])
        self.frames_out = FrameReader(fds["out"], limits.max_value_bytes)
        self.stdout = Capture(fds["stdout"], limits.max_output_bytes)
        self.stderr = Capture(fds["stderr"], limits.max_output_bytes)

    @classmethod
    def start(cls, sandbox: Sandbox, limits: Limits) -> Resident:
        ours: dict[str, int] = {}
        theirs: list[int] = []
        for name, reads in (("stdout", True), ("stderr", True), ("in", False), ("out", True)):
            read, write = os.pipe2(os.O_CLOEXEC)
            ours[name], child = (read, write) if reads else (write, read)
            theirs.append(child)
        pipes, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        theirs.append(child_end.fileno())
        spawn_limits = dict(limits.for_timeout(1), cpu_seconds=None)  # it outlives jobs
        try:
            token = sandbox.spawn("py_checker_loop", theirs, spawn_limits)
        except BaseException:
            for fd in ours.values():
                os.close(fd)
            pipes.close()
            raise
        finally:
            for fd in theirs[:-1]:
                os.close(fd)
            child_end.close()
        for fd in ours.values():
            _nonblocking(fd)
        return cls(sandbox, token, limits, ours, pipes)

    def usable_for(self, limits: Limits) -> bool:
        return (
            self.uses < MAX_USES
            and self.key == _limits_key(limits)
            and not self.frames_out.eof
            and not self.stdout.eof
            and not self.stderr.eof
            and not self.frames_in.broken
            and self._alive()
        )

    def _alive(self) -> bool:
        """Between jobs nobody reads its pipes: a hang-up on its socket means it is gone."""
        poller = select.poll()
        poller.register(self.pipes.fileno(), select.POLLIN)
        return not poller.poll(0)

    def attach(self, session: Session) -> None:
        """Watch our pipes during this job (the session does not own them)."""
        for capture in (self.stdout, self.stderr):
            capture.data.clear()
        self.frames_out.frames.clear()
        for item in (self.frames_out, self.stdout, self.stderr):
            session.adopt(item)

    def submit(self, session: Session, setup: dict[str, Any], calls: int, replies: int) -> None:
        """The candidate's two pipe ends (which we then close), then the test program:
        by the time the checker has read the program, the ends are already there for it
        (no second wake-up)."""
        self.uses += 1
        try:
            socket.send_fds(self.pipes, [b"p"], [calls, replies])
        except OSError:
            self.frames_out.eof = True  # gone: the job reports the checker ended
            return
        session.send(self.frames_in, setup)

    def exit_status(self) -> dict[str, Any] | None:
        return self.sandbox.exits.get(self.token)

    def close(self) -> None:
        for fd in self._fds.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds.clear()
        self.pipes.close()
