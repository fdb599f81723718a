"""Running a coroutine from sync code, whether or not an event loop is already running."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

__all__ = ["run_coroutine"]

T = TypeVar("T")


async def _boxed(awaitable: Awaitable[T]) -> tuple[T | None, KeyboardInterrupt | None]:
    """An interrupt leaves the loop as a value: raised inside the task, asyncio would also
    log it as an exception never retrieved."""
    try:
        return await awaitable, None
    except KeyboardInterrupt as exc:
        return None, exc
    except asyncio.CancelledError as exc:  # Ctrl-C cancels the main task: raise its report
        if isinstance(exc.__cause__, KeyboardInterrupt):
            return None, exc.__cause__
        raise


def _unboxed(outcome: tuple[T | None, KeyboardInterrupt | None]) -> T:
    value, interrupt = outcome
    if interrupt is not None:
        raise interrupt
    return value  # type: ignore[return-value]


def run_coroutine(awaitable: Awaitable[T]) -> T:
    """Run ``awaitable`` to completion from sync code, even inside a running loop."""
    coroutine = awaitable if isinstance(awaitable, Coroutine) else _wait_for(awaitable)
    try:
        asyncio.get_running_loop()
        in_loop = True
    except RuntimeError:
        in_loop = False
    if not in_loop:  # outside the except block, so tracebacks carry no "during handling"
        return _unboxed(asyncio.run(_boxed(coroutine)))  # type: ignore[no-any-return]
    # Called from inside a running loop (a notebook, an async app): use a private one.
    outcome: dict[str, Any] = {}

    context = contextvars.copy_context()  # the caller's context variables come along

    def runner() -> None:
        try:
            outcome["value"] = context.run(asyncio.run, _boxed(coroutine))
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=runner, name="assay-evaluate")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return _unboxed(outcome["value"])  # type: ignore[no-any-return]


async def _wait_for(awaitable: Awaitable[T]) -> T:
    return await awaitable
