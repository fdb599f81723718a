"""Distributed tracing headers, in LangSmith's format.

``langsmith-trace`` holds the caller's dotted order (``<start><run id>`` per ancestor,
joined by dots); ``baggage`` holds ``langsmith-metadata`` (JSON), ``langsmith-tags`` and
``langsmith-project``, URL-quoted. Headers come from the network: reading them is bounded
(size, depth) and never raises; what cannot be read names no parent.
"""

from __future__ import annotations

import json
import logging
import urllib.parse
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

TRACE_HEADER = "langsmith-trace"
_PREFIX = "langsmith-"
_STAMP = "%Y%m%dT%H%M%S%fZ"
_STAMP_LENGTH = 22  # 20240102T030405123456Z
_ID_LENGTH = 36
_MAX_HEADER = 16_384  # bytes of either header we read; longer ones name no parent
_MAX_DEPTH = 128  # ancestors in a dotted order

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RemoteParent:
    """The run another service's headers name, and what its baggage carried."""

    run_id: uuid.UUID
    trace_id: uuid.UUID
    parent_id: uuid.UUID | None
    dotted_order: str
    metadata: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    project_name: str | None = None


def to_headers(
    dotted_order: str, metadata: dict[str, Any], tags: list[str] | None, project: str
) -> dict[str, str]:
    baggage = []
    if metadata:
        baggage.append(f"{_PREFIX}metadata={urllib.parse.quote(json.dumps(metadata, default=str))}")
    if tags:
        baggage.append(f"{_PREFIX}tags={urllib.parse.quote(','.join(tags))}")
    if project:
        baggage.append(f"{_PREFIX}project={urllib.parse.quote(project)}")
    return {TRACE_HEADER: dotted_order, "baggage": ",".join(baggage)}


def parent_from_headers(headers: Mapping[Any, Any]) -> RemoteParent | None:
    trace = _header(headers, TRACE_HEADER)
    if not trace:
        return None
    ids = _parse_dotted_order(trace.strip())
    if ids is None:
        logger.warning("ignoring a %s header that is not a dotted order", TRACE_HEADER)
        return None
    metadata, tags, project = _parse_baggage(_header(headers, "baggage") or "")
    return RemoteParent(
        run_id=ids[-1],
        trace_id=ids[0],
        parent_id=ids[-2] if len(ids) > 1 else None,
        dotted_order=trace.strip(),
        metadata=metadata,
        tags=tags,
        project_name=project,
    )


def _header(headers: Mapping[Any, Any], name: str) -> str | None:
    """A header by name, in any case, as str or bytes; None when absent or oversized."""
    for key, value in headers.items():
        key_text = key.decode("latin-1") if isinstance(key, bytes) else str(key)
        if key_text.lower() == name:
            text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
            return text if len(text) <= _MAX_HEADER else None
    return None


def _parse_dotted_order(text: str) -> list[uuid.UUID] | None:
    parts = text.split(".", _MAX_DEPTH)
    if len(parts) > _MAX_DEPTH:
        return None
    ids = []
    for part in parts:
        if len(part) != _STAMP_LENGTH + _ID_LENGTH:
            return None
        try:
            datetime.strptime(part[:_STAMP_LENGTH], _STAMP)
            ids.append(uuid.UUID(part[_STAMP_LENGTH:]))
        except ValueError:
            return None
    return ids


def _parse_baggage(text: str) -> tuple[dict[str, Any], list[str], str | None]:
    metadata: dict[str, Any] = {}
    tags: list[str] = []
    project = None
    for item in text.split(","):
        key, _, value = item.strip().partition("=")
        value = urllib.parse.unquote(value)
        if key == f"{_PREFIX}metadata":
            metadata = _json_object(value)
        elif key == f"{_PREFIX}tags":
            tags = [tag for tag in value.split(",") if tag]
        elif key == f"{_PREFIX}project":
            project = value or None
    return metadata, tags, project


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nesting too deep to read
        return {}
    return value if isinstance(value, dict) else {}
