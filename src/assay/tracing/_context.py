"""What tracing knows about the current moment: the run being recorded, and the settings
``tracing_context`` put in place. Both live in contextvars, so nesting follows sync code,
threads started by assay, and asyncio tasks.

And where a finished trace goes: a root run recorded outside an experiment. LangSmith sends a ``@traceable`` call's runs to a tracing project when tracing is on
(``LANGSMITH_TRACING=true`` and its older spellings, ``tracing_context(enabled=True)``,
``@traceable(enabled=True)``). assay stores them in the local store instead, in one
transaction once the root run ends, where ``assay ui`` shows them under the project's
name: the ``client=`` given (to ``@traceable``, ``tracing_context`` or in
``langsmith_extra``), else the default store (``ASSAY_DATABASE_URL``, else
``./.assay/assay.db``). Inside an experiment a traced call is a child of the row's run
and is stored with the row, never here.

The client package does the storing (it applies the client's ``hide_inputs`` and
anonymizer, and makes the project); it registers itself with ``set_trace_sink`` when it
is imported, which ``import assay`` does. A trace that cannot be stored is a warning on
the ``assay.tracing`` logger, never an error in the traced function.
"""

from __future__ import annotations

import contextvars
import logging
import os
from collections.abc import Callable
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
    client: Any | None = None  # where a trace that ends in the block is stored, if tracing is on


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


_log = logging.getLogger("assay.tracing")

#: LangSmith's switches (it reads them in this order), and assay's own
TRACING_VARIABLES = (
    "LANGSMITH_TRACING_V2",
    "LANGCHAIN_TRACING_V2",
    "LANGSMITH_TRACING",
    "LANGCHAIN_TRACING",
    "ASSAY_TRACING",
)
PROJECT_VARIABLES = ("LANGSMITH_PROJECT", "LANGCHAIN_PROJECT")

#: stores a finished root run and its descendants: (client or None, root run, allow_files)
TraceSink = Callable[[Any, Any, bool], None]
_sink: TraceSink | None = None
#: set while a trace is being stored: a traced function the storing calls (a client's
#: ``hide_inputs``, say) records in memory only, or each store would start another
_storing: contextvars.ContextVar[bool] = contextvars.ContextVar("assay_storing_a_trace", default=False)


def set_trace_sink(sink: TraceSink) -> None:
    global _sink
    _sink = sink


def tracing_on(*switches: bool | None) -> bool:
    """Whether a finished trace is stored: the first switch set (a call's ``enabled``,
    then ``tracing_context``'s) decides, else the environment does. LangSmith's
    ``enabled="local"`` keeps the runs in memory only, as False does here."""
    for switch in switches:
        if switch is not None:
            return switch is True
    return any(os.environ.get(name, "").strip().lower() == "true" for name in TRACING_VARIABLES)


def starts_a_stored_trace(run: Any) -> bool:
    """A root run, or the first run here under a remote parent (distributed tracing: the
    other process stores its own runs, this one the runs under them)."""
    parent = run.parent_run
    return parent is None or getattr(parent, "is_remote", False) is True


def traces_kept_in_memory() -> bool:
    """Whether an experiment runs, or a trace is being stored, in this context: traced calls
    are then kept in memory, never traces of their own (an evaluator's would cost a commit
    each, in another project; a hiding function's would store without end)."""
    if _storing.get():
        return True
    from assay.store.current import in_experiment as running  # on use: import assay stays light

    return running()


def default_project() -> str:
    """The project of a run no one named one for: LangSmith's variables, else "default"."""
    for name in PROJECT_VARIABLES:
        if os.environ.get(name):
            return os.environ[name]
    return "default"


def store_trace(root: Any, client: Any | None, allow_files: bool = False) -> None:
    """Hand ``root`` (ended, with its descendants) to the sink; a failure is logged."""
    if _sink is None:  # the client package was never imported: nothing can store it
        _log.warning("the trace of %r (run %s) was not stored: import assay first", root.name, root.id)
        return
    token = _storing.set(True)
    try:
        _sink(client, root, allow_files)
    except Exception as exc:  # noqa: BLE001 - the traced function's caller must not see it
        _log.warning(
            "the trace of %r (run %s) was not stored: %s: %s", root.name, root.id, type(exc).__name__, exc
        )
    finally:
        _storing.reset(token)
