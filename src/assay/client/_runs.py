"""``Client.create_run`` / ``update_run``: LangSmith's way to log a run by hand, a run with
no example behind it, kept in a tracing project (an experiment with no dataset).

A run is posted when it starts and patched when it ends; its inputs and outputs are
copied when they are given (a caller changing them later changes nothing stored).
``hide_inputs`` / ``hide_outputs`` / ``hide_metadata`` and ``anonymizer`` given to the
``Client`` apply to both, as in LangSmith: nothing they hide reaches the store.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from assay.client._run_values import as_json
from assay.errors import AlreadyExistsError, NotFoundError
from assay.schemas import Run
from assay.store import Store, codec
from assay.store.records import ExperimentRecord

__all__ = ["Hiding", "create_run", "new_run", "tracing_project", "update_run"]

#: what ``hide_inputs=`` / ``hide_outputs=`` may be: True hides all, a function rewrites
Hiding = bool | Callable[[dict[str, Any]], dict[str, Any]] | None
#: ``anonymizer=``: rewrites inputs, outputs, metadata and ``{"error": text}``
Anonymizer = Callable[[dict[str, Any]], dict[str, Any]] | None

# Run fields create_run takes as keywords (LangSmith's run body)
_RUN_FIELDS = frozenset(
    {
        "id",
        "trace_id",
        "parent_run_id",
        "dotted_order",
        "start_time",
        "end_time",
        "outputs",
        "error",
        "extra",
        "tags",
        "events",
        "reference_example_id",
        "attachments",
    }
)
# LangSmith's per-call server options and fields its server derives: nothing to do locally
_IGNORED = frozenset(
    {
        "api_key",
        "api_url",
        "service_key",
        "tenant_id",
        "authorization",
        "cookie",
        "status",
        "child_runs",
        "child_run_ids",
        "trace_id",
        "dotted_order",
        "parent_run_id",
        "session_name",
        "session_id",
    }
)


class _Client(Protocol):
    store: Store
    hide_inputs: Hiding
    hide_outputs: Hiding
    hide_metadata: Hiding
    anonymizer: Anonymizer


def create_run(
    client: _Client,
    name: str,
    inputs: dict[str, Any],
    run_type: str,
    *,
    project_name: str | None = None,
    revision_id: str | None = None,
    dangerously_allow_filesystem: bool = False,
    **kwargs: Any,
) -> None:
    """Store a run in a tracing project: ``project_name``, else the project of
    ``session_id``/``session_name``, else ``$LANGSMITH_PROJECT``, else ``"default"``
    (made on first use). A run id already stored is left as it is."""
    project = tracing_project(
        client, project_name, kwargs.pop("session_name", None), kwargs.pop("session_id", None)
    )
    run = new_run(client, name, inputs, run_type, kwargs, revision_id, dangerously_allow_filesystem)
    if run.trace_id is None and run.parent_run_id is None:
        run.trace_id = run.id  # a root run starts its trace
    elif run.trace_id is None:
        parent = client.store.get_traced_run(run.parent_run_id)  # type: ignore[arg-type]
        run.trace_id = parent.trace_id if parent is not None else run.parent_run_id
    client.store.add_traced_run(project.id, run)


def new_run(
    client: _Client,
    name: str,
    inputs: Any,
    run_type: str,
    fields: dict[str, Any],
    revision_id: str | None = None,
    allow_files: bool = False,
) -> Run:
    """The run as it is stored: its fields checked, the client's hiding applied."""
    if not isinstance(inputs, Mapping):
        raise TypeError(f"inputs= must be a dict, got {type(inputs).__name__}")
    run = Run(name=name, run_type=run_type, inputs=dict(inputs), **_run_fields(fields))
    if revision_id is not None:
        run.extra = {**run.extra, "metadata": {**run.metadata, "revision_id": revision_id}}
    run.attachments = _inline(run.attachments, allow_files)
    _private(client, run)
    return run


def update_run(
    client: _Client,
    run_id: uuid.UUID | str,
    *,
    name: str | None = None,
    run_type: str | None = None,
    start_time: datetime | None = None,
    end_time: datetime | None = None,
    error: str | None = None,
    inputs: dict[str, Any] | None = None,
    outputs: dict[str, Any] | None = None,
    events: list[dict[str, Any]] | None = None,
    extra: dict[str, Any] | None = None,
    tags: list[str] | None = None,
    attachments: dict[str, Any] | None = None,
    dangerously_allow_filesystem: bool = False,
    reference_example_id: uuid.UUID | str | None = None,
    **kwargs: Any,
) -> None:
    """Change a run ``create_run`` stored (its end, outputs, error, ...); what is left
    out (None) keeps its value; ``extra["metadata"]`` is merged into the stored one."""
    unknown = set(kwargs) - _IGNORED
    if unknown:
        raise TypeError(f"update_run() got unknown keyword(s) {sorted(unknown)}")
    wanted = _uuid(run_id, "run_id")
    current = client.store.get_traced_run(wanted)
    if current is None:
        raise NotFoundError(
            f"no run with id {wanted} made by create_run in {client.store.url}: create_run(id=...) it first"
        )
    given = {
        "name": name,
        "run_type": run_type,
        "start_time": start_time,
        "end_time": end_time,
        "error": error,
        "inputs": inputs,
        "outputs": outputs,
        "events": events,
        "extra": extra,
        "tags": tags,
        "attachments": _inline(attachments, dangerously_allow_filesystem),
        "reference_example_id": reference_example_id,
    }
    present = {k: v for k, v in given.items() if v is not None}
    patch = Run.model_validate({**current.model_dump(), "inputs": {}, "extra": {}, **present})
    _private(client, patch)  # on what is given only: a hiding function never runs twice on a value
    if extra is not None:
        patch.extra = _merged_extra(current.extra, patch.extra)
    client.store.update_traced_run(wanted, {k: getattr(patch, k) for k in present})


def tracing_project(
    client: _Client, name: str | None, session_name: Any, session_id: Any
) -> ExperimentRecord:
    if name is None and session_name is None and session_id is not None:
        record = client.store.get_experiment(id=_uuid(session_id, "session_id"))
        if record is None:
            raise NotFoundError(f"no project (experiment) with id {session_id} in {client.store.url}")
        return record
    wanted = (
        name or session_name or os.environ.get("LANGSMITH_PROJECT") or os.environ.get("LANGCHAIN_PROJECT")
    )
    wanted = wanted or "default"
    found = client.store.get_experiment(name=wanted)
    if found is not None:
        return found
    record = ExperimentRecord(name=wanted, status="completed", metadata={"tracing_project": True})
    try:
        client.store.create_experiment(record)
    except AlreadyExistsError:  # made meanwhile by another client
        return client.store.get_experiment(name=wanted) or record
    return record


def _run_fields(kwargs: dict[str, Any]) -> dict[str, Any]:
    unknown = set(kwargs) - _RUN_FIELDS - _IGNORED
    if unknown:
        raise TypeError(
            f"create_run() got unknown keyword(s) {sorted(unknown)}; run fields are {sorted(_RUN_FIELDS)}"
        )
    fields = {k: v for k, v in kwargs.items() if k in _RUN_FIELDS and v is not None}
    for key in ("id", "trace_id", "parent_run_id", "reference_example_id"):
        if key in fields:
            fields[key] = _uuid(fields[key], key)
    fields.setdefault("start_time", datetime.now(timezone.utc))
    return fields


def _hidden(values: Any, hiding: Hiding, anonymizer: Anonymizer, what: str) -> dict[str, Any]:
    """The values as stored, copied now (what JSON cannot hold kept as its repr): none
    (``hide_<what>=True``), the anonymizer's rewrite, the hiding function's, or all of
    them, in LangSmith's order."""
    if not isinstance(values, Mapping):
        raise TypeError(f"{what}= must be a dict, got {type(values).__name__}")
    if hiding is True:
        return {}
    copied: dict[str, Any] = codec.loads(codec.dumps(as_json(dict(values))))
    rewrite = anonymizer or (hiding if callable(hiding) else None)
    if rewrite is None:
        return copied
    kept = rewrite(copied)
    if not isinstance(kept, dict):
        option = "anonymizer" if anonymizer else f"hide_{what}"
        raise TypeError(f"Client({option}=...) must return a dict, got {type(kept).__name__}")
    return kept


def _scrubbed_error(error: str | None, anonymizer: Anonymizer) -> str | None:
    """An error text through the anonymizer (as ``{"error": text}``, LangSmith's way)."""
    if anonymizer is None or error is None:
        return error
    scrubbed = anonymizer({"error": error})
    return str(scrubbed["error"]) if isinstance(scrubbed, dict) and "error" in scrubbed else error


def _private(client: _Client, run: Run) -> None:
    """Apply the client's hiding options and anonymizer to a run about to be stored."""
    run.inputs = _hidden(run.inputs, client.hide_inputs, client.anonymizer, "inputs")
    if run.outputs is not None:
        run.outputs = _hidden(run.outputs, client.hide_outputs, client.anonymizer, "outputs")
    run.error = _scrubbed_error(run.error, client.anonymizer)
    if "metadata" in run.extra:
        metadata = _hidden(run.metadata, client.hide_metadata, client.anonymizer, "metadata")
        run.extra = {**run.extra, "metadata": metadata}


def _merged_extra(stored: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    metadata = {**(stored.get("metadata") or {}), **(given.get("metadata") or {})}
    return {**stored, **given, **({"metadata": metadata} if metadata else {})}


def _inline(attachments: dict[str, Any] | None, allow_files: bool) -> dict[str, Any] | None:
    """Attachments as ``{name: (mime type, bytes)}``: a file path is read only with
    ``dangerously_allow_filesystem=True`` (LangSmith's guard: a path may come from data)."""
    if not attachments:
        return attachments
    inlined = {}
    for name, attachment in attachments.items():
        mime, data = (
            attachment if isinstance(attachment, (tuple, list)) else ("application/octet-stream", attachment)
        )
        if isinstance(data, (str, Path)):
            if not allow_files:
                raise ValueError(
                    f"attachment {name!r} names a file ({data}); pass its bytes, or "
                    "dangerously_allow_filesystem=True to read it"
                )
            data = Path(data).read_bytes()
        inlined[name] = (mime, bytes(data))
    return inlined


def _uuid(value: Any, parameter: str) -> uuid.UUID:
    """(``_projects.as_uuid``, which imports this module on use.)"""
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise ValueError(f"{parameter}={value!r} is not a UUID") from None
