"""What may be given as an example's attachment, made bytes and checked.

LangSmith's shapes: ``(mime_type, bytes)``, ``(mime_type, Path)``, ``Attachment``,
``{"mime_type", "data"}``; also ``{"mime_type", "reader"}`` (an attachment as evaluate
hands it over), a ``Path`` alone (its type guessed from its name), bytes alone, and an
attachment read back from a store (kept by reference to its stored bytes).
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import AttachmentError, AttachmentTooLargeError
from assay.store.attachments.stored import StoredAttachment

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_BYTES_SETTING",
    "AttachmentData",
    "given_attachments",
    "max_attachment_bytes",
]

MAX_BYTES_SETTING = "ASSAY_MAX_ATTACHMENT_BYTES"
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
_FALLBACK_TYPE = "application/octet-stream"
_LONGEST_TEXT = 255  # a name or a MIME type: a label, not a place to keep data


def max_attachment_bytes() -> int:
    """The largest attachment the store takes: ``ASSAY_MAX_ATTACHMENT_BYTES``, else 50 MiB."""
    text = os.environ.get(MAX_BYTES_SETTING, "").strip().replace("_", "")
    if not text:
        return DEFAULT_MAX_BYTES
    if not text.isdigit() or int(text) <= 0:
        raise AttachmentError(
            f"{MAX_BYTES_SETTING}={text!r}: give the largest attachment to store, in bytes "
            f"(a positive whole number; the default is {DEFAULT_MAX_BYTES})"
        )
    return int(text)


@dataclass(frozen=True)
class AttachmentData:
    """An attachment's bytes to store, with their SHA-256 (the stored blob's key)."""

    mime_type: str
    data: bytes
    sha256: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha256", hashlib.sha256(self.data).hexdigest())

    @property
    def size(self) -> int:
        return len(self.data)


Given = AttachmentData | StoredAttachment


def given_attachments(attachments: Mapping[str, Any] | None, example: str) -> dict[str, Given] | None:
    """``attachments`` as the store keeps them (None: no change was asked for). Errors
    name the example, the attachment and what to pass instead."""
    if attachments is None:
        return None
    if not isinstance(attachments, Mapping):
        raise AttachmentError(
            f"example {example}: attachments must be a dict of name -> (mime_type, bytes), "
            f"got {type(attachments).__name__}"
        )
    limit = max_attachment_bytes()
    made: dict[str, Given] = {}
    for name, value in attachments.items():
        where = f"example {example} attachment {name!r}"
        if not isinstance(name, str) or not name.strip() or any(ord(ch) < 32 for ch in name):
            raise AttachmentError(f"{where}: a name must be non-empty text without control characters")
        if len(name) > _LONGEST_TEXT:
            raise AttachmentError(f"example {example}: an attachment's name has {len(name)} characters; "
                                  f"give one of at most {_LONGEST_TEXT}")  # fmt: skip
        made[name] = value if isinstance(value, StoredAttachment) else _data(value, where, limit)
        _check_size(made[name].size, where, limit)
    return made


def _data(value: Any, where: str, limit: int) -> AttachmentData:
    mime_type, content = _parts(value, where)
    if not isinstance(mime_type, str) or not mime_type.strip() or len(mime_type) > _LONGEST_TEXT:
        shown = repr(mime_type)[:80]
        raise AttachmentError(
            f"{where}: its MIME type must be text such as 'image/png' (at most {_LONGEST_TEXT} characters), got {shown}"
        )
    return AttachmentData(mime_type.strip(), _bytes(content, where, limit))


def _parts(value: Any, where: str) -> tuple[Any, Any]:
    if isinstance(value, Path):
        return mimetypes.guess_type(value.name)[0] or _FALLBACK_TYPE, value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _FALLBACK_TYPE, value
    if isinstance(value, tuple) and len(value) == 2:  # (mime_type, data), Attachment included
        return value[0], value[1]
    if isinstance(value, Mapping) and "mime_type" in value and ("data" in value or "reader" in value):
        return value["mime_type"], value["data"] if "data" in value else value["reader"]
    raise AttachmentError(
        f"{where} is a {type(value).__name__}; give (mime_type, bytes), (mime_type, Path), "
        "Attachment(mime_type, data) or {'mime_type': ..., 'data': ...}"
    )


def _bytes(content: Any, where: str, limit: int) -> bytes:
    if isinstance(content, (bytes, bytearray, memoryview)):
        return bytes(content)
    if isinstance(content, Path):
        return _file(content, where, limit)
    read = getattr(content, "read", None)
    if callable(read):  # a reader: from its start, never more than the limit and one byte
        seek = getattr(content, "seek", None)
        if callable(seek):
            seek(0)
        data = read(limit + 1)
        if callable(seek):
            seek(0)  # left at its start for whoever reads it next
        if isinstance(data, (bytes, bytearray)):
            return bytes(data)
    if isinstance(content, str):
        raise AttachmentError(
            f"{where}: its data is text; give bytes (text.encode()) or a pathlib.Path to a file"
        )
    raise AttachmentError(f"{where}: its data is a {type(content).__name__}; give bytes or a pathlib.Path")


def _file(path: Path, where: str, limit: int) -> bytes:
    try:
        size = path.stat().st_size
        _check_size(size, where, limit)
        with path.open("rb") as handle:
            return handle.read(limit + 1)
    except OSError as exc:
        raise AttachmentError(f"{where}: cannot read {path}: {exc.strerror or exc}") from None


def _check_size(size: int, where: str, limit: int) -> None:
    if size > limit:
        raise AttachmentTooLargeError(
            f"{where} is {size:,} bytes, over the limit of {limit:,} bytes; to store it, set "
            f"{MAX_BYTES_SETTING} to a larger number of bytes (nothing was stored)"
        )
