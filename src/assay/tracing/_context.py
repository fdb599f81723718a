"""What tracing knows about the current moment: the run being recorded, and the settings
``tracing_context`` put in place. Both live in contextvars, so nesting follows sync code,
threads started by assay, and asyncio tasks."""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import Any

from assay.schemas import Run


@dataclass(frozen=True)
class TracingSettings:
    """Set by ``tracing_context``; read by every traced call inside it."""

    enabled: bool | None = None
    project_name: str | None = None
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)


_current_run: contextvars.ContextVar[Any | None] = contextvars.ContextVar("assay_current_run", default=None)
_NO_SETTINGS = TracingSettings()  # frozen, and never mutated: safe as the shared default
_settings: contextvars.ContextVar[TracingSettings] = contextvars.ContextVar(
    "assay_tracing_settings",
    default=_NO_SETTINGS,  # noqa: B039
)


def get_current_run() -> Run | None:
    """The run being recorded in this context, if any."""
    current = _current_run.get()
    return current if isinstance(current, Run) else None


def current_parent() -> Any | None:
    """The current run or the stand-in for a target's root run (anything with ``id``,
    ``trace_id``, ``dotted_order`` and ``child_runs``)."""
    return _current_run.get()


def set_current_run(run: Any) -> contextvars.Token[Any | None]:
    """Make ``run`` (a Run, or anything with ``id``, ``trace_id`` and ``child_runs``) the
    parent of traceable calls until ``reset_current_run``."""
    return _current_run.set(run)


def reset_current_run(token: contextvars.Token[Any | None]) -> None:
    _current_run.reset(token)


def current_settings() -> TracingSettings:
    return _settings.get()


def set_settings(settings: TracingSettings) -> contextvars.Token[TracingSettings]:
    return _settings.set(settings)


def reset_settings(token: contextvars.Token[TracingSettings]) -> None:
    _settings.reset(token)
