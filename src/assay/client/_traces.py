"""A trace that ended outside an experiment, stored in its tracing project.

``assay.tracing`` hands over the root run of a ``@traceable`` call or a ``trace()`` block
when tracing is on (see ``assay.tracing._export``); this stores the root and every run
under it in one transaction, each as ``Client.create_run`` would (the client's hiding
options and anonymizer applied), in the project the root names.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

from assay.client._runs import new_run, tracing_project
from assay.schemas import Run
from assay.store import Store

__all__ = ["store_trace"]

_defaults: dict[tuple[str, str], Any] = {}
_defaults_lock = threading.Lock()


def store_trace(client: Any | None, root: Any, allow_files: bool, new_client: Callable[[], Any]) -> None:
    """Store ``root`` and its descendants with ``client`` (else, or when it is not assay's
    (a LangSmith client left in migrated code), ``new_client()``'s, made once per default
    store).
    ``allow_files``: an attachment given as a path is read (``@traceable``'s
    ``dangerously_allow_filesystem=True``); else it is refused, as ``create_run`` does."""
    if client is None or not isinstance(getattr(client, "store", None), Store):
        client = _default_client(new_client)  # none given, or LangSmith's: the default store
    runs = [_stored(client, run, allow_files) for run in _descendants(root)]
    project = tracing_project(client, getattr(root, "session_name", None), None, None)
    client.store.add_traced_runs(project.id, runs)


def _stored(client: Any, run: Any, allow_files: bool) -> Run:
    fields = {
        "id": run.id,
        "trace_id": run.trace_id or run.id,
        "parent_run_id": run.parent_run_id,
        "dotted_order": run.dotted_order,
        "start_time": run.start_time,
        "end_time": run.end_time,
        "outputs": run.outputs,
        "error": run.error,
        "extra": run.extra,
        "tags": getattr(run, "tags", None),
        "events": run.events,
        "reference_example_id": run.reference_example_id,
        "attachments": getattr(run, "attachments", None) or None,
    }
    return new_run(client, run.name, run.inputs, run.run_type, fields, allow_files=allow_files)


def _descendants(root: Any) -> Iterator[Any]:
    """The root, then every run under it, depth first (no recursion: any depth works)."""
    stack = [root]
    while stack:
        run = stack.pop()
        yield run
        stack.extend(reversed(run.child_runs))


def _default_client(new_client: Callable[[], Any]) -> Any:
    """One ``Client()`` per store address (``ASSAY_DATABASE_URL``, else the working
    folder's ``.assay/assay.db``), opened on first use and kept for the process."""
    key = (os.environ.get("ASSAY_DATABASE_URL", ""), os.getcwd())
    with _defaults_lock:
        client = _defaults.get(key)
        if client is None:
            client = _defaults[key] = new_client()
        return client
