"""Spawning a child in a sandbox and talking to it: shared by the jobs."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assay.errors import SandboxError
from assay.sandbox._io import Capture, FrameReader, FrameWriter, Session
from assay.sandbox._sandbox import Sandbox
from assay.sandbox.config import Limits
from assay.sandbox.languages import Language
from assay.sandbox.results import Output

EXIT_GRACE_SECONDS = 0.5
DEFAULT_LIMITS = Limits()  # frozen, safe to share
DRAIN_SECONDS = 1.0


@dataclass
class Child:
    """A spawned process as the parent sees it."""

    sandbox: Sandbox
    token: str
    stdout: Capture
    stderr: Capture
    frames_in: FrameWriter
    frames_out: FrameReader | None

    def exit_status(self) -> dict[str, Any] | None:
        return self.sandbox.exits.get(self.token)


def spawn_child(
    session: Session,
    sandbox: Sandbox,
    language: Language,
    role: str,
    limits: Limits,
    timeout: float,
    *,
    calls: tuple[int, int] | None = None,
    replies: tuple[int, int] | None = None,
    extra_fds: Sequence[int] = (),
    read_frames: bool = True,
) -> Child:
    """Descriptors in the child: 1 stdout, 2 stderr, 3 frames in, 4 frames out, then
    ``extra_fds``. ``calls``/``replies`` supply the frame pipes instead of fresh ones.

    Its exit is always reported (watched): a process it forked may hold its pipes open
    after it ended, so their end of file says nothing about the child itself."""
    out_r, out_w = session.pipe()
    err_r, err_w = session.pipe()
    in_r, in_w = calls or session.pipe()
    frames_r, frames_w = replies or session.pipe()
    spec = language.spawn(role, sandbox.harness_root, sandbox.settings.runtime, limits.memory_bytes)
    handed = [out_w, err_w, in_r, frames_w, *extra_fds]
    token = sandbox.spawn(spec.role, handed, limits.for_timeout(timeout), spec.argv, watch=True)
    for fd in handed:
        session.release(fd)
    session.watch_sandbox(sandbox)
    return Child(
        sandbox,
        token,
        stdout=session.capture(out_r, limits.max_output_bytes),
        stderr=session.capture(err_r, limits.max_output_bytes),
        frames_in=session.writer(in_w),
        frames_out=session.reader(frames_r, limits.max_value_bytes) if read_frames else None,
    )


def next_frame(session: Session, child: Any, deadline: float) -> tuple[Any, bool]:
    """(frame or None if the process ended, timed_out). The process has ended when its
    exit is reported, even while a process it forked keeps the pipe open: what it wrote
    before is read, and the caller's reset kills what it left."""
    reader = child.frames_out
    assert reader is not None
    if not session.wait(lambda: reader.done or has_ended(child), deadline):
        return None, True
    if not reader.done:
        reader.read_written(session)
    return (reader.frames.popleft() if reader.frames else None), False


def has_ended(child: Any) -> bool:
    """Whether a child's (or a resident checker's) exit is known, or its sandbox died."""
    return child.exit_status() is not None or bool(child.sandbox.dead)


def ended_status(session: Session, child: Child, deadline: float) -> dict[str, Any] | None:
    """How the child ended (its frames stopped): asked for, briefly waited for."""
    try:
        child.sandbox.watch(child.token)
    except SandboxError:
        return None
    grace = min(deadline, time.monotonic() + EXIT_GRACE_SECONDS)
    session.wait(lambda: child.exit_status() is not None or child.sandbox.dead, grace)
    return child.exit_status()


def finish(session: Session, sandboxes: Sequence[Sandbox], timed_out: bool, keep_build: bool = False) -> None:
    """On timeout, kill the whole sandbox (the parent's decision, not the candidate's).
    Otherwise collect the output already written (a child flushes before each frame it
    sends) and start the reset, which kills whatever the job left behind."""
    if timed_out:
        for sandbox in sandboxes:
            sandbox.kill()
        session.drain(time.monotonic() + DRAIN_SECONDS)
        return
    session.drain_available()
    for sandbox in sandboxes:
        try:
            sandbox.begin_reset(keep_build)
        except SandboxError:
            sandbox.kill()


def collect_output(child: Child | None, before: Output) -> Output:
    if child is None:
        return before
    return Output(
        before.stdout + child.stdout.text(),
        before.stderr + child.stderr.text(),
        before.truncated or child.stdout.truncated or child.stderr.truncated,
    )


def bounded_text(value: Any) -> str | None:
    """Text from a child, capped: it is shown to people and stored."""
    if value is None:
        return None
    try:
        text = value if type(value) is str else str(value)
    except Exception:  # noqa: BLE001 - an int past the conversion limit, say
        text = f"<{type(value).__name__} that cannot be shown>"
    return text[:20000]
