"""Running a coroutine from sync code, whether or not an event loop is already running."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any


def run_coroutine(coroutine: Any) -> Any:
    """Run ``coroutine`` to completion from sync code, even inside a running loop."""
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
    return outcome["value"]
