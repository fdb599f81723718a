"""How rows are dispatched: the interface, the default (local) executor, and the choice by
environment (``ASSAY_EXECUTOR``). The executors (``assay.executors``) build on this module
(what an executor is handed: the ``RowPipeline`` and the ``RowFeed`` of planned rows);
it finds the one the environment names by its module path, never importing them itself."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from assay.errors import ExecutorError
from assay.evaluation._feed import RowFeed
from assay.evaluation._rows import PlannedRow, RowPipeline, in_thread

if TYPE_CHECKING:
    from assay.store.records import ExperimentRow

__all__ = [
    "Executor",
    "ExecutorError",
    "LocalExecutor",
    "PlannedRow",
    "RowFeed",
    "RowPipeline",
    "executor_from_env",
    "in_thread",
    "resolve_executor",
]

EXECUTOR_VARIABLE = "ASSAY_EXECUTOR"
RAY_ADDRESS_VARIABLE = "ASSAY_RAY_ADDRESS"


@runtime_checkable
class Executor(Protocol):
    """Runs the fed rows somewhere and hands each finished row to ``accept``.

    ``accept`` runs in the driver (the calling process) and stores the row: executors
    never touch the store. It raises to stop the run (``error_handling="raise"``, a
    failed write); an executor stops dispatching when it does.
    """

    async def run_rows(
        self,
        pipeline: RowPipeline,
        feed: RowFeed,
        accept: Callable[[ExperimentRow], None],
        max_concurrency: int,
    ) -> None: ...


class LocalExecutor:
    """Threads and an event loop in this process: what ``evaluate`` does by default.

    The runner handles it itself (``run_rows`` is never called on it); it exists so that
    ``executor=LocalExecutor()`` can be said explicitly, e.g. to override ``ASSAY_EXECUTOR``.
    """

    def __repr__(self) -> str:
        return "LocalExecutor()"


def executor_from_env() -> Executor | None:
    """The executor ``ASSAY_EXECUTOR`` names (``local``, the default, or ``ray``), or None
    for the local one. ``ray`` connects to ``ASSAY_RAY_ADDRESS`` (default ``auto``)."""
    chosen = os.environ.get(EXECUTOR_VARIABLE, "").strip().lower()
    if chosen in ("", "local"):
        return None
    if chosen == "ray":
        ray_executor = importlib.import_module("assay.executors.ray").RayExecutor
        executor: Executor = ray_executor(address=os.environ.get(RAY_ADDRESS_VARIABLE) or "auto")
        return executor
    raise ExecutorError(
        f"{EXECUTOR_VARIABLE}={chosen!r} is not an executor: use 'local' (the default) or 'ray'"
    )


def resolve_executor(executor: object) -> Executor | None:
    """``evaluate(executor=...)``: None means the environment's choice; a
    :class:`LocalExecutor` means the built-in runner; anything else must be an executor."""
    if executor is None:
        return executor_from_env()
    if isinstance(executor, LocalExecutor):
        return None
    if not isinstance(executor, Executor):
        raise ExecutorError(
            f"executor= takes an executor such as RayExecutor(address='auto') or LocalExecutor(); "
            f"got {executor!r}"
        )
    return executor
