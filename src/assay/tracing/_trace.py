"""``trace()`` (a run around a block), ``tracing_context()`` (settings for a block) and
``get_current_run_tree()``, as in ``langsmith.run_helpers``."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any

from assay.tracing._context import (
    TracingSettings,
    current_parent,
    current_settings,
    default_project,
    reset_current_run,
    reset_settings,
    set_current_run,
    set_settings,
    starts_a_stored_trace,
    store_trace,
    traces_kept_in_memory,
    tracing_on,
)
from assay.tracing.run_tree import RunTree

_log = logging.getLogger("assay.tracing")


class trace:  # noqa: N801 - LangSmith's name, used as `with trace(...)`
    """Record the block as a run: ``with trace("step", inputs={...}) as run: run.end(outputs=...)``.

    Works with ``with`` and ``async with``. The block's exception propagates and is recorded
    as the run's error, unless its type is in ``exceptions_to_handle``.
    """

    def __init__(
        self,
        name: str,
        run_type: str = "chain",
        *,
        inputs: dict[str, Any] | None = None,
        extra: dict[str, Any] | None = None,
        project_name: str | None = None,
        parent: Any | None = None,
        tags: Sequence[str] | None = None,
        metadata: dict[str, Any] | None = None,
        client: Any = None,
        run_id: Any | None = None,
        reference_example_id: Any | None = None,
        exceptions_to_handle: tuple[type[BaseException], ...] | None = None,
        attachments: dict[str, Any] | None = None,
        **ignored: Any,
    ) -> None:
        self._fields: dict[str, Any] = {
            "name": name,
            "run_type": run_type,
            "inputs": dict(inputs or {}),
            "extra": dict(extra or {}),
            "tags": list(tags or []),
            "reference_example_id": reference_example_id,
            "attachments": dict(attachments or {}),
        }
        if run_id is not None:
            self._fields["id"] = run_id
        self._project_name = project_name
        self._parent = parent
        self._metadata = dict(metadata or {})
        self._handled = exceptions_to_handle or ()
        self._client = client
        self._token: contextvars.Token[Any] | None = None
        self._settings = current_settings()  # as the block begins (``__enter__``)
        self.run: RunTree | None = None

    def __enter__(self) -> RunTree:
        settings = current_settings()
        parent = self._parent or current_parent()
        fields = dict(self._fields)
        fields["tags"] = [*settings.tags, *fields["tags"]]
        metadata = {**settings.metadata, **self._metadata}
        if metadata:
            fields["extra"]["metadata"] = {**fields["extra"].get("metadata", {}), **metadata}
        fields["session_name"] = (
            self._project_name
            or settings.project_name
            or getattr(parent, "session_name", None)
            or default_project()
        )
        run = RunTree(parent_run=parent, **fields)
        self.run = run
        self._settings = settings
        if settings.enabled is False:  # not recorded: the runs inside join the enclosing one
            return run
        if parent is not None:
            parent.child_runs.append(run)
        self._token = set_current_run(run)
        return run

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        recorded = self._token is not None  # tracing was on when the block began
        if self._token is not None:
            reset_current_run(self._token)
            self._token = None
        run = self.run
        if run is None:
            return
        if error is not None and not isinstance(error, self._handled):
            run.end(error=f"{type(error).__name__}: {error}")
        elif run.end_time is None:
            run.end()
        if not recorded:
            return
        if self._client is not None:
            # LangSmith's trace(client=...) posts its run: here the whole tree, as it ended
            run.client = self._client
            store_trace(run, self._client)
        elif (
            starts_a_stored_trace(run) and tracing_on(self._settings.enabled) and not traces_kept_in_memory()
        ):
            store_trace(run, self._settings.client)

    async def __aenter__(self) -> RunTree:
        return self.__enter__()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(kind, error, tb)


@contextmanager
def tracing_context(
    *,
    project_name: str | None = None,
    tags: Sequence[str] | None = None,
    metadata: dict[str, Any] | None = None,
    parent: Any | None = None,
    enabled: bool | None = None,
    client: Any | None = None,
    **ignored: Any,
) -> Iterator[None]:
    """Settings for every traced call in the block: tags and metadata are added to theirs,
    ``parent`` becomes their parent run (a run, or the headers of a request that carried one:
    see ``RunTree.to_headers``), ``enabled=False`` records nothing, ``enabled=True`` stores
    the traces that end in the block (in ``client``'s store, else the default one)."""
    if isinstance(parent, Mapping):  # a request's headers that carry the caller's run
        parent = RunTree.from_headers(parent)
    if isinstance(parent, RunTree):  # the parent's tags and metadata reach the runs inside
        tags = sorted({*(tags or ()), *(parent.tags or ())})
        metadata = {**parent.metadata, **(metadata or {})}
    now = current_settings()
    settings = TracingSettings(
        enabled=now.enabled if enabled is None else enabled,
        project_name=project_name or now.project_name,
        tags=(*now.tags, *(tags or ())),
        metadata={**now.metadata, **(metadata or {})},
        client=client if client is not None else now.client,
    )
    settings_token = set_settings(settings)
    run_token = set_current_run(parent) if parent is not None else None
    try:
        yield
    finally:
        if run_token is not None:
            reset_current_run(run_token)
        reset_settings(settings_token)


def get_tracing_context() -> dict[str, Any]:
    settings = current_settings()
    return {
        "parent": current_parent(),
        "project_name": settings.project_name,
        "tags": list(settings.tags),
        "metadata": dict(settings.metadata),
        "enabled": settings.enabled,
    }


def get_current_run_tree() -> RunTree | Any | None:
    """The run being recorded here: inside a traced call its RunTree; inside an
    experiment's target, the row's root run (as a RunTree); else None."""
    current = current_parent()
    as_tree = getattr(current, "as_run_tree", None)
    return as_tree() if callable(as_tree) else current


def set_run_metadata(**metadata: Any) -> None:
    """Add metadata to the run being recorded (logs a warning, and does nothing, outside one)."""
    run = current_parent()
    if not isinstance(run, RunTree):
        _log.warning("No active run tree found: set_run_metadata() adds nothing outside a traced run")
        return
    run.add_metadata(metadata)
