"""Running a coroutine from sync code, whether or not an event loop is already running."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

__all__ = ["run_coroutine"]

T = TypeVar("T")


def run_coroutine(awaitable: Awaitable[T]) -> T:
    """Run ``awaitable`` to completion from sync code, even inside a running loop."""
    coroutine = awaitable if isinstance(awaitable, Coroutine) else _wait_for(awaitable)
    try:
        asyncio.get_running_loop()
        in_loop = True
    except RuntimeError:
        in_loop = False
    if not in_loop:  # outside the except block, so tracebacks carry no "during handling"
        return asyncio.run(coroutine)
    # Called from inside a running loop (a notebook, an async app): use a private one.
    outcome: dict[str, Any] = {}

    context = contextvars.copy_context()  # the caller's context variables come along

    def runner() -> None:
        try:
            outcome["value"] = context.run(asyncio.run, coroutine)
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=runner, name="assay-evaluate")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value


async def _wait_for(awaitable: Awaitable[T]) -> T:
    return await awaitable
