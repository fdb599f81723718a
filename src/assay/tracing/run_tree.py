"""``RunTree``: a run you build by hand (LangSmith's ``langsmith.run_trees.RunTree``).

It is a ``Run`` with the methods LangSmith code calls on it. ``post``/``patch`` have
nowhere to send anything: a tree lives in memory, and inside an experiment every child
is stored with the row's run when the row is written.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr, field_validator, model_validator

from assay.schemas import Run, dotted_order_of, utcnow

#: metadata keys naming a conversation; a child run carries its parent's (LangSmith's rule)
_THREAD_KEYS = ("session_id", "thread_id", "conversation_id")

#: "20240412T202937370454Z": the time stamp that starts each step of a dotted order
_STAMP_LENGTH = 22

__all__ = ["RunTree"]


def _plain(value: Any) -> Any:
    """A pydantic model as its fields (nested models too), as LangSmith records it."""
    return value.model_dump() if isinstance(value, BaseModel) else value


class RunTree(Run):
    """A run with ``create_child``, ``end``, ``add_*`` and the no-op ``post``/``patch``."""

    name: str = "run"
    tags: list[str] = Field(default_factory=list)
    attachments: dict[str, Any] = Field(default_factory=dict)
    parent_run: Any | None = Field(default=None, exclude=True)
    session_name: str = "default"
    serialized: dict[str, Any] | None = None
    client: Any | None = Field(default=None, exclude=True)  # LangSmith's; nothing to send here
    _remote: bool = PrivateAttr(default=False)  # a stand-in for a run of another process

    @property
    def is_remote(self) -> bool:
        """A stand-in made from another process's headers (``from_headers``): its runs here
        are stored as a trace of their own, under it, and it is not stored from here."""
        return self._remote

    @model_validator(mode="before")
    @classmethod
    def _ls_client_is_client(cls, data: Any) -> Any:
        """LangSmith accepts the client as ``client`` or ``ls_client``."""
        if isinstance(data, dict) and "ls_client" in data:
            data = dict(data)
            ls_client = data.pop("ls_client")
            data.setdefault("client", ls_client)
        return data

    @field_validator("events", mode="before")
    @classmethod
    def _no_events(cls, value: Any) -> Any:
        return [] if value is None else value

    @field_validator("inputs", "outputs", mode="before")
    @classmethod
    def _plain_values(cls, value: Any) -> Any:
        """Pydantic models given as inputs or outputs are kept as their fields."""
        return _plain(value)

    @model_validator(mode="after")
    def _link(self) -> RunTree:
        parent = self.parent_run
        if parent is not None:
            self.parent_run_id = parent.id
            self.trace_id = parent.trace_id or parent.id
            if self.session_id is None:
                self.session_id = getattr(parent, "session_id", None)
        elif self.trace_id is None:
            self.trace_id = self.id
        if self.dotted_order is None:
            parent_order = getattr(parent, "dotted_order", None) if parent is not None else None
            self.dotted_order = dotted_order_of(self.start_time, self.id, parent_order)
        return self

    def create_child(
        self,
        name: str,
        run_type: str = "chain",
        *,
        run_id: uuid.UUID | str | None = None,
        inputs: dict[str, Any] | None = None,
        outputs: dict[str, Any] | None = None,
        error: str | None = None,
        reference_example_id: uuid.UUID | None = None,
        start_time: datetime | None = None,
        end_time: datetime | None = None,
        tags: Sequence[str] | None = None,
        extra: dict[str, Any] | None = None,
        attachments: dict[str, Any] | None = None,
        serialized: dict[str, Any] | None = None,
    ) -> RunTree:
        """A child run, appended to ``child_runs`` now (so it is kept even if never ended)."""
        fields: dict[str, Any] = {
            "name": name,
            "run_type": run_type,
            "inputs": dict(inputs or {}),
            "outputs": outputs,
            "error": error,
            "reference_example_id": reference_example_id,
            "end_time": end_time,
            "tags": list(tags or []),
            "extra": dict(extra or {}),
            "attachments": dict(attachments or {}),
            "serialized": serialized,
            "parent_run": self,
            "session_name": self.session_name,
            "session_id": self.session_id,
            "client": self.client,
        }
        if run_id is not None:
            fields["id"] = uuid.UUID(str(run_id))
        # A child cannot start before its parent (clocks of two hosts, or a given time).
        fields["start_time"] = max(start_time or utcnow(), self.start_time)
        thread = {key: self.metadata[key] for key in _THREAD_KEYS if key in self.metadata}
        if thread:
            fields["extra"]["metadata"] = {**thread, **fields["extra"].get("metadata", {})}
        child = RunTree(**fields)
        self.child_runs.append(child)
        return child

    def end(
        self,
        *,
        outputs: dict[str, Any] | None = None,
        error: str | None = None,
        end_time: datetime | None = None,
        events: Sequence[dict[str, Any]] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.end_time = end_time or utcnow()
        if outputs is not None:
            self.add_outputs(_plain(outputs))
        if error is not None:
            self.error = error
        if events:
            self.events.extend(events)
        if metadata:
            self.add_metadata(metadata)

    def set(
        self,
        *,
        inputs: dict[str, Any] | None = None,
        outputs: dict[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Replace (not merge) the given parts."""
        if inputs is not None:
            self.inputs = dict(_plain(inputs))
        if outputs is not None:
            self.outputs = dict(_plain(outputs))
        if tags is not None:
            self.tags = list(tags)
        if metadata is not None:
            self.extra["metadata"] = dict(metadata)

    def add_tags(self, tags: str | Sequence[str]) -> None:
        self.tags.extend([tags] if isinstance(tags, str) else tags)

    def add_metadata(self, metadata: dict[str, Any]) -> None:
        self.extra.setdefault("metadata", {}).update(metadata)

    def add_outputs(self, outputs: dict[str, Any]) -> None:
        self.outputs = {**(self.outputs or {}), **outputs}

    def add_inputs(self, inputs: dict[str, Any]) -> None:
        self.inputs = {**self.inputs, **inputs}

    def add_event(self, events: dict[str, Any] | str | Sequence[dict[str, Any]]) -> None:
        if isinstance(events, str):
            self.events.append({"name": "event", "time": utcnow().isoformat(), "message": events})
        elif isinstance(events, dict):
            self.events.append(events)
        else:
            self.events.extend(events)

    def post(self, exclude_child_runs: bool = True) -> None:
        """With a client given (``RunTree(client=Client())``), store the run with its
        ``create_run`` in the project ``session_name`` (its children too, unless
        ``exclude_child_runs``). Without one, nothing to send: assay keeps the tree in
        memory (and stores it with its row inside an experiment)."""
        create_run = getattr(self.client, "create_run", None)
        if create_run is None:
            return
        create_run(project_name=self.session_name, **self._stored_fields())
        if not exclude_child_runs:
            for child in self.child_runs:
                if isinstance(child, RunTree):
                    child.client = child.client or self.client
                    child.post(exclude_child_runs=False)

    def patch(self, *, exclude_inputs: bool = False) -> None:
        """With a client, store the run's end (outputs, error, end time, ...) with its
        ``update_run`` (a run never posted is posted whole); see ``post``."""
        update_run = getattr(self.client, "update_run", None)
        if update_run is None:
            return
        fields = self._stored_fields()
        run_id = fields.pop("id")
        for identity in ("name", "run_type", "trace_id", "parent_run_id", "dotted_order"):
            fields.pop(identity)
        if exclude_inputs:
            fields.pop("inputs")
        try:
            update_run(run_id, **fields)
        except LookupError:  # never posted: LangSmith's server takes a lone patch as the run
            self.post()

    def _stored_fields(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "run_type": self.run_type,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "error": self.error,
            "start_time": self.start_time,
            "end_time": self.end_time,
            "trace_id": self.trace_id,
            "parent_run_id": self.parent_run_id,
            "dotted_order": self.dotted_order,
            "extra": self.extra,
            "tags": self.tags,
            "events": self.events,
            "reference_example_id": self.reference_example_id,
        }

    def wait(self) -> None:
        """Nothing is ever in flight."""

    def json(self, **options: Any) -> str:
        """The run as JSON (LangSmith code calls ``.json()``; the client is left out)."""
        return self.model_dump_json(**options)

    def to_headers(self) -> dict[str, str]:
        """Headers that carry this run to another service (``langsmith-trace``, ``baggage``),
        where ``RunTree.from_headers`` (or ``tracing_context(parent=headers)``) continues it."""
        from assay.tracing import _headers  # distributed tracing: loaded when used

        return _headers.to_headers(self.dotted_order or "", self.metadata, self.tags, self.session_name)

    @classmethod
    def from_headers(cls, headers: Any, **fields: Any) -> RunTree | None:
        """A stand-in for the remote parent named by ``headers``; None when they name none
        (or name it in a form that cannot be read: headers come from the network)."""
        from assay.tracing import _headers

        parent = _headers.parent_from_headers(headers)
        if parent is None:
            return None
        metadata = {**parent.metadata, **fields.pop("metadata", {})}
        extra = dict(fields.pop("extra", None) or {})
        extra["metadata"] = {**metadata, **extra.get("metadata", {})}
        fields.setdefault("name", "parent")
        if parent.project_name:
            fields.setdefault("session_name", parent.project_name)
        stand_in = cls(
            id=parent.run_id,
            trace_id=parent.trace_id,
            parent_run_id=parent.parent_id,
            dotted_order=parent.dotted_order,
            tags=sorted({*parent.tags, *(fields.pop("tags", None) or [])}),
            extra=extra,
            **fields,
        )
        stand_in._remote = True
        return stand_in

    @classmethod
    def from_dotted_order(cls, dotted_order: str, **fields: Any) -> RunTree:
        """The run a dotted order names (a parent for runs continuing it)."""
        found = cls.from_headers({"langsmith-trace": dotted_order}, **fields)
        if found is None:
            raise ValueError(f"not a dotted order: {dotted_order[:200]!r}")
        return found

    @property
    def trace_start_time(self) -> datetime:
        """When the trace began: the root run's start (the first step of the dotted order)."""
        if self.dotted_order and len(self.dotted_order) >= _STAMP_LENGTH:
            try:
                stamp = datetime.strptime(self.dotted_order[:_STAMP_LENGTH], "%Y%m%dT%H%M%S%fZ")
            except ValueError:
                return self.start_time
            return stamp.replace(tzinfo=timezone.utc)
        return self.start_time

    @property
    def latency(self) -> float | None:
        """Seconds from start to end, as LangSmith's ``RunTree.latency``."""
        return None if self.end_time is None else (self.end_time - self.start_time).total_seconds()


def _as_dict(self: RunTree, **options: Any) -> dict[str, Any]:
    """LangSmith code calls the pydantic-1 ``.dict()``; the client is left out."""
    return self.model_dump(**options)


# Set after the class is built: a method named ``dict`` in the class body would shadow
# the builtin in the fields' annotations.
RunTree.dict = _as_dict  # type: ignore[assignment,method-assign]
