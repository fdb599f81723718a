"""Files given with inline data (``data=[Example(attachments=...)]``): stored with the
content-addressed dataset when they are files, their contents then naming the dataset
too (other data with other files is another dataset); attachments that are not files
(any other object) are handed to the run only, as they always were."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.errors import AttachmentError, AttachmentTooLargeError, DataError
from assay.store.attachments import given_attachments

__all__ = ["file_digests"]


def file_digests(attachments: Mapping[str, Any], where: str) -> dict[str, list[str]] | None:
    """``{name: [mime_type, sha256]}`` when every attachment is a file, else None. A
    file over the size limit is an error naming it: it would not be stored."""
    try:
        files = given_attachments(attachments, where) or {}
    except AttachmentTooLargeError as exc:
        raise DataError(str(exc)) from None
    except AttachmentError:
        return None
    return {name: [value.mime_type, value.sha256] for name, value in files.items()}
