"""An attachment read back from the store, as LangSmith's ``AttachmentInfo``."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["StoredAttachment", "data_url"]

_KEYS = ("presigned_url", "reader", "mime_type")


class StoredAttachment(Mapping[str, Any]):
    """``{"reader", "mime_type", "presigned_url"}`` of a stored attachment.

    Each look-up of ``reader`` gives a new ``BytesIO`` at the start of the bytes, so a
    target and then each evaluator read the whole file, however many read it before.
    The bytes are read from the store on first use and kept; ``presigned_url`` is a
    ``data:`` URL of them (what a model API takes as an image's URL)."""

    __slots__ = ("_data", "_load", "mime_type", "sha256", "size")

    def __init__(self, mime_type: str, size: int, sha256: str, load: Callable[[], bytes]) -> None:
        self.mime_type, self.size, self.sha256 = mime_type, size, sha256
        self._load: Callable[[], bytes] | None = load
        self._data: bytes | None = None

    @classmethod
    def of_bytes(cls, mime_type: str, sha256: str, data: bytes) -> StoredAttachment:
        made = cls(mime_type, len(data), sha256, lambda: data)
        made._data = data
        return made

    @property
    def data(self) -> bytes:
        if self._data is None:
            assert self._load is not None
            self._data, self._load = self._load(), None
        return self._data

    def __getitem__(self, key: str) -> Any:
        if key == "reader":
            return io.BytesIO(self.data)
        if key == "mime_type":
            return self.mime_type
        if key == "presigned_url":
            return data_url(self.mime_type, self.data)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(_KEYS)

    def __len__(self) -> int:
        return len(_KEYS)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StoredAttachment):
            return (self.sha256, self.mime_type) == (other.sha256, other.mime_type)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled with its bytes (a worker process has no way into this store)."""
        return (StoredAttachment.of_bytes, (self.mime_type, self.sha256, self.data))

    def __repr__(self) -> str:
        return f"StoredAttachment(mime_type={self.mime_type!r}, size={self.size}, sha256={self.sha256[:12]!r}...)"


def data_url(mime_type: str, data: bytes) -> str:
    return f"data:{mime_type};base64,{base64.b64encode(data).decode('ascii')}"
