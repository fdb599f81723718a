"""Running a coroutine from sync code, whether or not an event loop is already running."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any, Optional


async def _boxed(coroutine: Any) -> tuple[Any, Optional[KeyboardInterrupt]]:
    """An interrupt leaves the loop as a value: raised inside the task, asyncio would also
    log it as an exception never retrieved."""
    try:
        return await coroutine, None
    except KeyboardInterrupt as exc:
        return None, exc
    except asyncio.CancelledError as exc:  # Ctrl-C cancels the main task: raise its report
        if isinstance(exc.__cause__, KeyboardInterrupt):
            return None, exc.__cause__
        raise


def _unboxed(outcome: tuple[Any, Optional[KeyboardInterrupt]]) -> Any:
    value, interrupt = outcome
    if interrupt is not None:
        raise interrupt
    return value


def run_coroutine(coroutine: Any) -> Any:
    """Run ``coroutine`` to completion from sync code, even inside a running loop."""
    try:
        asyncio.get_running_loop()
        in_loop = True
    except RuntimeError:
        in_loop = False
    if not in_loop:  # outside the except block, so tracebacks carry no "during handling"
        return _unboxed(asyncio.run(_boxed(coroutine)))
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
    return _unboxed(outcome["value"])
