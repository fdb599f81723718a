"""Files kept with examples: given in LangSmith's shapes, stored once per content
(SHA-256) in the store's ``blobs`` table, read back as LangSmith's ``AttachmentInfo``.

- ``given``: what a caller may pass as an attachment, checked and made bytes
  (``AttachmentData``), under the size limit ``ASSAY_MAX_ATTACHMENT_BYTES``;
- ``stored``: ``StoredAttachment``, an attachment read back, whose ``reader`` is a new
  reader of its bytes at each look-up (a target and each evaluator read it whole).
"""

from assay.store.attachments.given import (
    DEFAULT_MAX_BYTES,
    MAX_BYTES_SETTING,
    AttachmentData,
    given_attachments,
    max_attachment_bytes,
)
from assay.store.attachments.stored import StoredAttachment, data_url

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_BYTES_SETTING",
    "AttachmentData",
    "StoredAttachment",
    "data_url",
    "given_attachments",
    "max_attachment_bytes",
]
