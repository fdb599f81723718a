"""Streams between the parent and a stdin/stdout program: its input fed from a file or
bytes in chunks, its output handed chunk by chunk to whoever judges it, its stderr kept
up to a cap and the rest read and dropped. Nothing is ever held whole in the parent."""

from __future__ import annotations

import os
from typing import BinaryIO, Protocol

from assay.sandbox._io import Session

CHUNK = 1 << 16


class OutputSink(Protocol):
    """Takes a program's output as it comes; ``feed`` returns False once it wants no
    more (it has seen too much), and the parent stops reading."""

    def feed(self, data: bytes) -> bool: ...


class Feeder:
    """Writes ``source`` into a pipe as the reader takes it; closes the pipe at the end
    (the program sees end of file). A reader that closes its end early (a program that
    reads only part of its input, or none) ends the feeding: not an error."""

    def __init__(self, fd: int, source: BinaryIO) -> None:
        self.fd = fd
        self.source = source
        self.pending = b""
        self.done = False

    def on_ready(self, session: Session) -> None:
        if not self.pending:
            self.pending = self.source.read(CHUNK)
            if not self.pending:
                self._close(session)
                return
        try:
            written = os.write(self.fd, self.pending)
        except BlockingIOError:
            return
        except OSError:  # EPIPE: the program is done reading
            self._close(session)
            return
        self.pending = self.pending[written:]

    def _close(self, session: Session) -> None:
        self.done = True
        session.forget(self)
        session.release(self.fd)


class Drain:
    """A program's output descriptor, read to its end: each chunk to ``sink``. Once the
    sink has had enough, our end closes (the writer gets EPIPE) and ``overflowed`` is set."""

    def __init__(self, fd: int, sink: OutputSink) -> None:
        self.fd = fd
        self.sink = sink
        self.eof = False
        self.overflowed = False

    def on_ready(self, session: Session) -> None:
        try:
            data = os.read(self.fd, CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data and self.sink.feed(data):
            return
        self.overflowed = bool(data)
        self.eof = True
        session.forget(self)
        session.release(self.fd)


class Kept:
    """A sink that keeps the first ``limit`` bytes and reads (and drops) the rest: a
    program writing without end to stderr costs us reading, never memory, and is not
    stopped by a closed pipe."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.dropped = 0

    def feed(self, data: bytes) -> bool:
        room = self.limit - len(self.data)
        self.data += data[:room]
        self.dropped += max(0, len(data) - room)
        return True

    def text(self) -> str:
        body = self.data.decode("utf-8", errors="replace")
        if self.dropped:
            body += f"\n[{self.dropped} more bytes not kept]"
        return body


class Spool:
    """A sink writing the output to a file the parent owns (for a checker program),
    up to ``limit`` bytes."""

    def __init__(self, target: BinaryIO, limit: int) -> None:
        self.target = target
        self.limit = limit
        self.size = 0

    def feed(self, data: bytes) -> bool:
        self.size += len(data)
        if self.size > self.limit:
            return False
        self.target.write(data)
        return True
