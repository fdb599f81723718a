"""Length-prefixed JSON frames: the only language spoken across the sandbox boundary.

A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON.
Values inside frames are encoded by ``codec``; frames carry only plain JSON.
"""

from __future__ import annotations

import json
import json.encoder
import json.scanner
import os
import struct
from typing import Any

HEADER = struct.Struct(">I")
MAX_FRAME_BYTES = 64 * 1024 * 1024


class FrameError(ValueError):
    """A frame that is too large or is not valid JSON."""


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_ASCII_ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def _direct_encoder() -> Any:
    """The C encoder behind ``_ENCODER``, built once: ``JSONEncoder.encode`` builds a new
    one for every message, a third of the cost of a small frame (a call's reply). No
    cycle markers: frames carry fresh trees from ``codec`` and the harness, and the C
    encoder's recursion guard still stops anything too deep."""
    make = getattr(json.encoder, "c_make_encoder", None)
    quote = getattr(json.encoder, "c_encode_basestring", None)
    if make is None or quote is None:
        return None
    try:
        return make(None, _ENCODER.default, quote, None, ":", ",", False, False, False)
    except TypeError:  # another interpreter's signature: the plain encoder it is
        return None


def _direct_scanner() -> Any:
    make = getattr(json.scanner, "c_make_scanner", None)
    return make(json.JSONDecoder()) if make is not None else None


_DIRECT_ENCODE = _direct_encoder()
_DIRECT_SCAN = _direct_scanner()


def encode_body(message: Any) -> bytes:
    """A frame's body alone (compact UTF-8 JSON): also the zygote's control messages."""
    body = "".join(_DIRECT_ENCODE(message, 0)) if _DIRECT_ENCODE is not None else _ENCODER.encode(message)
    try:
        return body.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: escaped as \uXXXX, it reads back as itself
        return _ASCII_ENCODER.encode(message).encode("ascii")


def encode_frame(message: Any) -> bytes:
    data = encode_body(message)
    if len(data) > MAX_FRAME_BYTES:
        raise FrameError(f"frame of {len(data)} bytes exceeds the {MAX_FRAME_BYTES}-byte limit")
    return HEADER.pack(len(data)) + data


def decode_body(data: bytes) -> Any:
    try:
        return _parse(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:  # an int of > 4300 digits is one too
        raise FrameError(f"frame is not valid UTF-8 JSON: {exc}") from None
    except RecursionError:
        raise FrameError("frame is nested too deeply") from None


def _parse(text: str) -> Any:
    """``json.loads``, with the scanner called directly for the usual frame (compact,
    no surrounding whitespace); anything else goes through ``json.loads`` itself, so
    errors and whitespace are handled exactly as it handles them."""
    if _DIRECT_SCAN is not None:
        try:
            value, end = _DIRECT_SCAN(text, 0)
        except StopIteration:
            end = -1
        if end == len(text):
            return value
    return json.loads(text)


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
