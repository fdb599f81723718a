"""The parent's side of a job's pipes: frames in and out, captured output with a size
cap, all pumped by one selector loop against a deadline. No threads."""

from __future__ import annotations

import fcntl
import os
import select
import selectors
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from assay.sandbox.harness.frames import FrameBuffer, FrameError, encode_frame

CHUNK = 1 << 16


def ready(fd: int | Any, timeout: float, *, for_write: bool = False) -> bool:
    """Whether ``fd`` (or an object with ``fileno()``) is readable (writable) within
    ``timeout`` seconds. ``poll``, not ``select``: the caller's process may hold more than
    1,024 descriptors, which ``select`` refuses."""
    poller = select.poll()
    poller.register(fd, select.POLLOUT if for_write else select.POLLIN)
    return bool(poller.poll(max(0.0, timeout) * 1000))


def _nonblocking(fd: int) -> None:
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)


MAX_UNREAD_FRAMES = 1


class FrameReader:
    """Frames a child writes to us; ``eof`` once it closed its end. A child answers one
    frame at a time: one that sends more than we asked for (to fill our memory with
    decoded values) has broken the protocol and is read no further."""

    def __init__(self, fd: int, limit: int) -> None:
        self.fd = fd
        self.frames: deque[Any] = deque()
        self.eof = False
        self.error: str | None = None
        self._buffer = FrameBuffer(limit)

    def on_ready(self, session: Session) -> None:
        data = _read_ready(self.fd)
        if data is not None:
            self._take(data, session)

    def read_written(self, session: Session) -> None:
        """Read what is in the pipe now, without waiting for more: once the writer has
        ended, its last frame. Bounded: it stops at a frame, at a frame past the limit
        or at end of file."""
        while not self.done:
            data = _read_ready(self.fd)
            if data is None:
                return  # nothing more there
            self._take(data, session)

    def _take(self, data: bytes, session: Session) -> None:
        if not data:
            self.eof = True
            session.forget(self)
            return
        try:
            self.frames.extend(self._buffer.feed(data))
        except FrameError as exc:
            self.error = str(exc)
        if len(self.frames) > MAX_UNREAD_FRAMES:
            self.frames.clear()
            self.error = "it sent frames nobody asked for"
        if self.error is not None:
            self.eof = True
            session.forget(self)

    @property
    def done(self) -> bool:
        return bool(self.frames) or self.eof


class FrameWriter:
    """Frames we send to a child; the descriptor closes once the last byte is out if
    ``close_when_flushed`` (so the child, or a process it was handed to, sees EOF)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pending = bytearray()
        self.broken = False
        self.close_when_flushed = False

    def on_ready(self, session: Session) -> None:
        try:
            written = os.write(self.fd, self.pending)
        except BlockingIOError:
            return
        except OSError:
            self.broken = True
            self.pending.clear()
            session.forget(self)
            return
        del self.pending[:written]
        if not self.pending:
            session.forget(self)

    @property
    def flushed(self) -> bool:
        return not self.pending


class Capture:
    """A child's stdout or stderr, kept up to ``limit`` bytes. Past the limit we close
    our end: further writes fail (EPIPE) instead of filling our memory."""

    def __init__(self, fd: int, limit: int) -> None:
        self.fd = fd
        self.limit = limit
        self.data = bytearray()
        self.truncated = False
        self.eof = False

    def on_ready(self, session: Session) -> None:
        data = _read_ready(self.fd)
        if data is None:
            return
        if not data:
            self.eof = True
            session.forget(self)
            return
        room = self.limit - len(self.data)
        self.data += data[:room]
        if len(data) > room:
            self.truncated = True
            self.eof = True
            session.forget(self)

    def text(self) -> str:
        body = self.data.decode("utf-8", errors="replace")
        if self.truncated:
            body += f"\n[output truncated at {self.limit} bytes]"
        return body


class Session:
    """Owns a job's parent-side descriptors; closes them all at the end."""

    def __init__(self) -> None:
        # poll(2): a handful of descriptors per job, and no kernel object to create
        self.selector: selectors.BaseSelector = selectors.PollSelector()
        self._owned: list[int] = []
        self._watched: dict[int, Any] = {}

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def pipe(self) -> tuple[int, int]:
        read, write = os.pipe2(os.O_CLOEXEC)
        self._owned += [read, write]
        return read, write

    def own(self, fd: int) -> int:
        """A descriptor opened elsewhere, closed with the pipes: once handed to a child
        (``release``), or at the end."""
        self._owned.append(fd)
        return fd

    def release(self, fd: int) -> None:
        """Close our copy of a descriptor handed to a child."""
        if fd in self._owned:
            self._owned.remove(fd)
            os.close(fd)

    def reader(self, fd: int, limit: int) -> FrameReader:
        reader = FrameReader(fd, limit)
        self._watch(reader, selectors.EVENT_READ)
        return reader

    def capture(self, fd: int, limit: int) -> Capture:
        capture = Capture(fd, limit)
        self._watch(capture, selectors.EVENT_READ)
        return capture

    def make_blocking(self, fd: int) -> None:
        """Before handing a descriptor we wrote to over to a child (O_NONBLOCK is shared)."""
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)

    def writer(self, fd: int) -> FrameWriter:
        _nonblocking(fd)
        return FrameWriter(fd)

    def send(self, writer: FrameWriter, message: Any, close_after: bool = False) -> None:
        """Queue ``message``; ``close_after``: close our end once it is all out (EOF for
        the child). Written at once if the pipe has room (non-blocking), so the child
        need not wait for our next pass through the selector."""
        writer.pending += encode_frame(message)
        writer.close_when_flushed = writer.close_when_flushed or close_after
        if writer.broken or writer.fd in self._watched:
            return
        self._watch(writer, selectors.EVENT_WRITE)
        writer.on_ready(self)  # the usual frame fits the pipe: written and forgotten here

    def adopt(self, item: Any) -> None:
        """Watch a reader or capture this session does not own (its descriptor stays
        open when the session closes)."""
        if not item.eof and item.fd not in self._watched:
            self.selector.register(item.fd, selectors.EVENT_READ, item)
            self._watched[item.fd] = item

    def watch_stream(self, item: Any, writing: bool = False) -> None:
        """Pump a raw stream (``_streams``): non-blocking, read or written when ready."""
        _nonblocking(item.fd)
        self._watch(item, selectors.EVENT_WRITE if writing else selectors.EVENT_READ)

    def watch_sandbox(self, sandbox: Any) -> None:
        """Process a sandbox's control messages (exit events) while we wait."""
        if sandbox.control is not None and not sandbox.dead:
            self._watch(_SandboxWatch(sandbox), selectors.EVENT_READ)

    def _watch(self, item: Any, events: int) -> Any:
        if isinstance(item, (FrameReader, Capture)):
            _nonblocking(item.fd)
        self.selector.register(item.fd, events, item)
        self._watched[item.fd] = item
        return item

    def forget(self, item: Any) -> None:
        if self._watched.pop(item.fd, None) is not None:
            self.selector.unregister(item.fd)
        if isinstance(item, FrameWriter) and item.close_when_flushed:
            self.release(item.fd)
        elif isinstance(item, Capture) and item.truncated:
            self.release(item.fd)

    def wait(self, condition: Callable[[], bool], deadline: float) -> bool:
        """Pump every descriptor until ``condition()`` holds (True) or time runs out."""
        while not condition():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if not self._watched:
                time.sleep(min(remaining, 0.001))
                continue
            for key, _events in self.selector.select(remaining):
                key.data.on_ready(self)
        return True

    def drain(self, deadline: float) -> None:
        """Read what is left in the captures (short, bounded)."""
        captures = [i for i in self._watched.values() if isinstance(i, Capture)]
        self.wait(lambda: all(c.eof for c in captures), deadline)

    def drain_available(self) -> None:
        """Read whatever the captures hold right now, without waiting for more."""
        for item in list(self._watched.values()):
            if isinstance(item, Capture):
                before = -1
                while not item.eof and len(item.data) != before:
                    before = len(item.data)
                    item.on_ready(self)

    def close(self) -> None:
        for fd in list(self._watched):
            self.selector.unregister(fd)
        self._watched.clear()
        self.selector.close()
        for fd in self._owned:
            try:
                os.close(fd)
            except OSError:
                pass
        self._owned.clear()


class _SandboxWatch:
    """A SEQPACKET control socket: readable means a whole message waits, so a blocking
    receive never blocks here."""

    def __init__(self, sandbox: Any) -> None:
        self.sandbox = sandbox
        self.fd = sandbox.control.fileno()

    def on_ready(self, session: Session) -> None:
        if self.sandbox.read_message() is None:
            session.forget(self)


def _read_ready(fd: int) -> bytes | None:
    """What ``fd`` has for us: None after a spurious wake-up, ``b""`` at end of file."""
    try:
        return os.read(fd, CHUNK)
    except BlockingIOError:
        return None
    except OSError:
        return b""
