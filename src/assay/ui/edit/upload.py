"""A pasted or picked file, read by the CLI's own import (``assay datasets import``):
every line checked before anything is stored, a bad one named by its line."""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path
from typing import Any

from assay.errors import AssayError
from assay.evaluation import load_file
from assay.schemas import Example
from assay.ui.errors import BadRequest

__all__ = ["FORMATS", "parse_upload"]

FORMATS = ("jsonl", "csv", "json")


def parse_upload(text: str, file_format: str, name: str, dataset_id: uuid.UUID) -> list[Example]:
    """The examples of ``text`` in ``file_format``; errors name ``name`` and the line."""
    if file_format not in FORMATS:
        raise BadRequest(f"parameter 'format': one of {', '.join(FORMATS)}; got {file_format!r}")
    shown = Path(name or "upload").stem or "upload"
    with tempfile.TemporaryDirectory(prefix="assay-upload-") as folder:
        path = Path(folder) / f"{shown}.{file_format}"
        path.write_text(text, encoding="utf-8")
        try:
            records = load_file(path)
        except AssayError as exc:
            raise BadRequest(f"{str(exc).replace(folder + '/', '')}; nothing was stored") from None
    if not records:
        raise BadRequest(f"{shown}.{file_format}: holds no examples; nothing was stored")
    return [_example(record, dataset_id) for record in records]


def _example(record: dict[str, Any], dataset_id: uuid.UUID) -> Example:
    return Example(
        dataset_id=dataset_id,
        inputs=record["inputs"],
        outputs=record.get("outputs"),
        metadata=record.get("metadata") or {},
    )
