"""The parent's frame writer: a frame goes out at once when the pipe has room, never
blocks the parent when it has not (a child that stops reading cannot stall it), and a
writer closed after its last frame gives the child its end of file."""

from __future__ import annotations

import os
import threading
import time

from assay.sandbox._io import Session
from assay.sandbox.harness.frames import FrameBuffer, encode_frame

PIPE_BYTES = 1 << 16


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, PIPE_BYTES):
        chunks.append(chunk)
    return b"".join(chunks)


def test_a_small_frame_is_in_the_pipe_before_any_wait() -> None:
    with Session() as session:
        read, write = session.pipe()
        writer = session.writer(write)
        session.send(writer, {"code": "x = 1"})
        assert writer.flushed
        os.set_blocking(read, False)
        assert FrameBuffer().feed(os.read(read, PIPE_BYTES)) == [{"code": "x = 1"}]


def test_close_after_gives_end_of_file_once_the_frame_is_out() -> None:
    with Session() as session:
        read, write = session.pipe()
        session.send(session.writer(write), {"run": True}, close_after=True)
        os.set_blocking(read, False)  # nothing may be left to wait for
        assert os.read(read, PIPE_BYTES) == encode_frame({"run": True})
        assert os.read(read, PIPE_BYTES) == b""  # end of file: our end is closed


def test_a_frame_larger_than_the_pipe_never_blocks_the_parent() -> None:
    message = {"code": "#" * (8 * PIPE_BYTES)}
    with Session() as session:
        read, write = session.pipe()
        writer = session.writer(write)
        started = time.monotonic()
        session.send(writer, message, close_after=True)
        assert time.monotonic() - started < 1.0
        assert not writer.flushed  # the rest waits for the reader
        received: list[bytes] = []
        reader = threading.Thread(target=lambda: received.append(_read_all(read)))
        reader.start()
        assert session.wait(lambda: writer.flushed, time.monotonic() + 10)
        reader.join(10)
        assert received == [encode_frame(message)]


def test_a_reader_that_is_gone_breaks_the_writer_without_an_error() -> None:
    with Session() as session:
        read, write = session.pipe()
        session.release(read)
        writer = session.writer(write)
        session.send(writer, {"code": "x"})
        assert writer.broken and writer.flushed
        session.send(writer, {"code": "y"})  # later frames are dropped, not raised
        assert writer.broken
