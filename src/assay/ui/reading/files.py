"""An example's stored files: listed on its pages, downloaded from here.

A file is whatever a dataset's author (or an attacker who wrote the dataset) put there,
so it is never shown in the UI's origin: it is served as a download
(``Content-Disposition: attachment``), as ``application/octet-stream`` unless its type
is one a browser only displays (images, audio, video, PDF, plain text), with ``nosniff``
and a sandboxing policy, so an HTML or SVG file cannot run script as the UI."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter
from fastapi.responses import Response

from assay.store.read.attachments import StoredFile, file_bytes, files_of
from assay.store.read.database import ReadOnlyDatabase
from assay.ui.errors import NotFound
from assay.ui.lookup import Database, DatasetParam
from assay.ui.params import VersionParam

__all__ = ["download_headers", "listed_files", "router"]

router = APIRouter(include_in_schema=False)

# Types a browser displays without running anything; any other is sent as bytes.
_DISPLAYED = frozenset(
    {
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
        "audio/mpeg",
        "audio/wav",
        "audio/x-wav",
        "audio/ogg",
        "video/mp4",
        "video/webm",
        "application/pdf",
        "text/plain",
    }
)
_SANDBOX = "default-src 'none'; sandbox"


@router.get("/datasets/{ref}/examples/{example_id}/attachment")
def download(
    dataset: DatasetParam, example_id: str, name: str, db: Database, version: VersionParam
) -> Response:
    """``?name=`` (a query parameter: any text, never a path), ``&version=`` (default: now)."""
    found = file_bytes(db, dataset.id, example_id, version, name)
    if found is None:
        at = "now" if version is None else f"at version {version}"
        raise NotFound(f"example {example_id!r} of dataset {dataset.name!r} has no file named {name!r} {at}")
    mime_type, data = found
    media_type, headers = download_headers(name, mime_type)
    return Response(data, media_type=media_type, headers=headers)


def download_headers(name: str, mime_type: str) -> tuple[str, dict[str, str]]:
    """The safe type to send a file as, and the headers that make it a download."""
    declared = mime_type.split(";", 1)[0].strip().lower()
    media_type = declared if declared in _DISPLAYED else "application/octet-stream"
    ascii_name = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:100] or "attachment"
    disposition = f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name, safe='')}"
    return media_type, {
        "Content-Disposition": disposition,
        "Content-Security-Policy": _SANDBOX,
        "X-Content-Type-Options": "nosniff",
    }


def listed_files(
    db: ReadOnlyDatabase, dataset_id: str | None, example_id: str, version: int | None
) -> list[StoredFile]:
    """The files a page lists for the example (none when it has no dataset)."""
    return [] if dataset_id is None else files_of(db, dataset_id, example_id, version)
