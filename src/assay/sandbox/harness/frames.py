"""Length-prefixed JSON frames: the only language spoken across the sandbox boundary.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON.
Values inside frames are encoded by ``codec``; frames carry only plain JSON.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any, Optional

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
    except (UnicodeDecodeError, ValueError) as exc:
        raise FrameError(f"frame is not valid UTF-8 JSON: {exc}") from None


def write_frame(fd: int, message: Any) -> None:
    view = memoryview(encode_frame(message))
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_frame(fd: int, limit: int = MAX_FRAME_BYTES) -> Optional[Any]:
    """The next frame from ``fd``, or None at end of file."""
    header = _read_exactly(fd, HEADER.size)
    if header is None:
        return None
    (length,) = HEADER.unpack(header)
    if length > limit:
        raise FrameError(f"incoming frame of {length} bytes exceeds the {limit}-byte limit")
    body = _read_exactly(fd, length)
    if body is None:
        raise FrameError("end of file inside a frame")
    return decode_body(body)


def _read_exactly(fd: int, size: int) -> Optional[bytes]:
    chunks: list[bytes] = []
    remaining = size
    while remaining:
        chunk = os.read(fd, remaining)
        if not chunk:
            if remaining == size:
                return None
            raise FrameError("end of file inside a frame")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


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
                raise FrameError(
                    f"incoming frame of {length} bytes exceeds the {self._limit}-byte limit"
                )
            end = HEADER.size + length
            if len(self._buffer) < end:
                break
            frames.append(decode_body(bytes(self._buffer[HEADER.size:end])))
            del self._buffer[:end]
        return frames

    @property
    def partial(self) -> bool:
        return bool(self._buffer)
