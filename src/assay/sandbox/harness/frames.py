"""Length-prefixed JSON frames: the only language spoken across the sandbox boundary.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON.
Values inside frames are encoded by ``codec``; frames carry only plain JSON.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

HEADER = struct.Struct(">I")
MAX_FRAME_BYTES = 64 * 1024 * 1024


class FrameError(ValueError):
    """A frame that is too large or is not valid JSON."""


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def encode_frame(message: Any) -> bytes:
    body = _ENCODER.encode(message)
    data = body.encode("utf-8")
    if len(data) > MAX_FRAME_BYTES:
        raise FrameError(f"frame of {len(data)} bytes exceeds the {MAX_FRAME_BYTES}-byte limit")
    return HEADER.pack(len(data)) + data


def decode_body(data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:  # an int of > 4300 digits is one too
        raise FrameError(f"frame is not valid UTF-8 JSON: {exc}") from None
    except RecursionError:
        raise FrameError("frame is nested too deeply") from None


def write_frame(fd: int, message: Any) -> None:
    view = memoryview(encode_frame(message))
    while view:
        written = os.write(fd, view)
        view = view[written:]


_pending: dict[int, bytearray] = {}


def read_frame(fd: int, limit: int = MAX_FRAME_BYTES) -> Any | None:
    """The next frame from ``fd``, or None at end of file. Reads in large chunks (a frame
    usually arrives whole, in one read); what follows the frame waits for the next call."""
    buffer = _pending.setdefault(fd, bytearray())
    if not _fill(fd, buffer, HEADER.size):
        if buffer:
            raise FrameError("end of file inside a frame")
        return None
    (length,) = HEADER.unpack_from(buffer)
    if length > limit:
        raise FrameError(f"incoming frame of {length} bytes exceeds the {limit}-byte limit")
    if not _fill(fd, buffer, HEADER.size + length):
        raise FrameError("end of file inside a frame")
    body = bytes(buffer[HEADER.size : HEADER.size + length])
    del buffer[: HEADER.size + length]
    return decode_body(body)


def forget(fd: int) -> None:
    """Drop what was buffered for ``fd`` (it is closed; its number may come back)."""
    _pending.pop(fd, None)


def _fill(fd: int, buffer: bytearray, size: int) -> bool:
    while len(buffer) < size:
        chunk = os.read(fd, max(size - len(buffer), 1 << 16))
        if not chunk:
            return False
        buffer += chunk
    return True


class FrameBuffer:
    """Incremental decoder for a non-blocking reader: feed bytes, take whole frames."""

    def __init__(self, limit: int = MAX_FRAME_BYTES) -> None:
        self._buffer = bytearray()
        self._limit = limit

    def feed(self, data: bytes) -> list[Any]:
        self._buffer += data
        frames: list[Any] = []
        while len(self._buffer) >= HEADER.size:
            (length,) = HEADER.unpack_from(self._buffer)
            if length > self._limit:
                raise FrameError(f"incoming frame of {length} bytes exceeds the {self._limit}-byte limit")
            end = HEADER.size + length
            if len(self._buffer) < end:
                break
            frames.append(decode_body(bytes(self._buffer[HEADER.size : end])))
            del self._buffer[:end]
        return frames

    @property
    def partial(self) -> bool:
        return bool(self._buffer)
